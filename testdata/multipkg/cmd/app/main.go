// Command app imports the package that holds nothing but the generated
// file: crontabgen scans it, and must load it before that file exists and
// while the old one is left out of the load.
package main

import (
	registry "example.com/multipkg/my-registry"
)

func main() {
	_, err := registry.NewScheduler(nil)
	println(err != nil, registry.NewClient(nil) != nil)
}
