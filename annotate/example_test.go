package annotate_test

import (
	"errors"
	"fmt"

	"github.com/gocrontab/crontab/annotate"
)

func ExampleParse() {
	d, err := annotate.Parse(`//crontab:name="clean logs" expression="daily:03:00" timeout=10m`)
	if err != nil {
		panic(err)
	}
	fmt.Println(d.Name, d.Expression, d.Timeout, d.Status, d.TZ)
	fmt.Println("expression value at offset", d.ValueOffsets["expression"])
	fmt.Println(d)
	// Output:
	// clean logs daily:03:00 10m0s active UTC
	// expression value at offset 39
	// //crontab:name="clean logs" expression="daily:03:00" timeout=10m
}

func ExampleParse_errors() {
	_, err := annotate.Parse(`//crontab:nmae="report" timeout=5x status=on`)
	var list annotate.ErrorList
	if errors.As(err, &list) {
		for _, e := range list {
			fmt.Printf("col %d: %s\n", e.Offset+1, e.Msg)
		}
	}
	// Output:
	// col 11: unknown key "nmae"; did you mean "name"?
	// col 33: timeout: invalid duration "5x"
	// col 43: status: want active, paused or disabled, got "on"
}
