// Package skipped is never scanned.
package skipped

//crontab:name=skipped
func Skipped() {}
