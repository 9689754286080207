// Command show prints the tasks the generated Register adds to a registry.
// It is in the scanned tree and uses the generated functions, so the
// generator must load it before they exist.
package main

import (
	"fmt"
	"os"
	"reflect"

	"example.com/e2e/tasks"
	crontab "github.com/gocrontab/crontab/runtime"
)

func main() {
	r := crontab.NewRegistry()
	if err := tasks.Register(r); err != nil {
		fmt.Println("register:", err)
		os.Exit(1)
	}
	for _, c := range r.Tasks() {
		fmt.Printf("%s class=%s expression=%q status=%s timeout=%v concurrent=%v tz=%s misfire=%s retries=%d new=%v\n",
			c.Name, c.Class, c.Expression, c.Status, c.Timeout, c.Concurrent, c.TZ, c.Misfire, c.Retries, reflect.TypeOf(c.New()))
	}
	if _, err := tasks.NewScheduler(nil); err != nil {
		fmt.Println("NewScheduler(nil):", err)
	}
	fmt.Println("NewClient:", tasks.NewClient(nil) != nil)
	if err := tasks.Register(r); err != nil {
		fmt.Println("register twice:", err)
	}
}
