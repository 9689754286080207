// Package out receives the generated file.
package out

// Version is what package cyclic uses, making an import cycle.
const Version = 1
