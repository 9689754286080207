package annotate

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

var fuzzSeeds = []string{
	`//crontab:name="clean logs" expression="daily:03:00"`,
	`//crontab:name=x`,
	`//crontab:`,
	`//crontab:name="sms" status=paused timeout=1h30m concurrent=1 tz="America/New_York" retries=3`,
	"//crontab:expression=`cron:*/5 * * * *` name=r misfire=skip status=disabled concurrent=F tz=Etc/GMT+5",
	`//crontab:name="\u00e9t\xc3\xa9 \"q\" \\" expression="\ta\x00"`,
	"//crontab:name=`a\\b` expression=`\r\tx\r`",
	`//crontab:name=x timeout=1ms retries=100`,
	`//crontab:nmae="x"`,
	`//crontab:name="a" name="b"`,
	`//crontab:name = "x"`,
	`//crontab:name= timeout=5s`,
	`//crontab:name:=x`,
	`//crontab:=`,
	`//crontab:name="x",timeout=5s`,
	`//crontab:name="x" "y" timeout=5s`,
	`//crontab:name="abc\`,
	`//crontab:name="\x4" tz="\'"`,
	`//crontab:name='clean logs' timeout=5s`,
	`//crontab:name=foo"bar baz" timeout=5x`,
	`//crontab:name=x status=on timeout=5x concurrent=yes tz="A B" misfire=x retries=101`,
	`//crontab:name=x expression=every:5s retries=3`,
	"//crontab:name=\"x\xffy\"",
	`// crontab:name=x`,
	`//crontab:name=f expression=every:1m concurrent=true max_running=50 rate=100/s priority=-5`,
	"//crontab:name=f max_running=1048576 rate=`5/1m` priority=1000",
	`//crontab:name=f rate="1/1.5ms" max_running=-1 priority=1001`,
	`//crontab:name=f expression=every:5s max_running=2 rate=0/s rate=5 prio=3`,
}

// FuzzParse checks that Parse never panics, that its errors are sorted and
// within the line, that a directive's offsets point at its keys, and that a
// directive survives String and Parse unchanged.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		d, err := Parse(line)
		if err != nil {
			if d != nil {
				t.Fatalf("Parse(%q) returned a directive and an error", line)
			}
			var list ErrorList
			if !errors.As(err, &list) || len(list) == 0 {
				t.Fatalf("Parse(%q) error %#v, want a non-empty ErrorList", line, err)
			}
			for i, e := range list {
				if e.Offset < 0 || e.Offset > len(line) || e.Msg == "" {
					t.Fatalf("Parse(%q): bad error %+v", line, e)
				}
				if i > 0 && list[i-1].Offset > e.Offset {
					t.Fatalf("Parse(%q): errors not sorted: %v", line, list)
				}
			}
			return
		}
		checkDirective(t, line, d)

		canon := d.String()
		d2, err := Parse(canon)
		if err != nil {
			t.Fatalf("Parse(%q) = %+v; its String %q does not parse: %v", line, values(d), canon, err)
		}
		if !reflect.DeepEqual(values(d), values(d2)) {
			t.Fatalf("round trip of %q through %q:\n got %+v\nwant %+v", line, canon, values(d2), values(d))
		}
		checkDirective(t, canon, d2)
		if again := d2.String(); again != canon {
			t.Fatalf("String is not canonical: %q, then %q", canon, again)
		}
	})
}

// checkDirective checks the invariants of a directive Parse returned.
func checkDirective(t *testing.T, line string, d *Directive) {
	t.Helper()
	switch {
	case d.Name == "" || len(d.Name) > MaxNameLen || !utf8.ValidString(d.Name):
		t.Fatalf("Parse(%q): bad name %q", line, d.Name)
	case d.Status != StatusActive && d.Status != StatusPaused && d.Status != StatusDisabled:
		t.Fatalf("Parse(%q): bad status %q", line, d.Status)
	case d.Timeout < MinTimeout || d.Timeout > MaxTimeout:
		t.Fatalf("Parse(%q): bad timeout %v", line, d.Timeout)
	case d.TZ == "" || strings.ContainsAny(d.TZ, " \t"):
		t.Fatalf("Parse(%q): bad tz %q", line, d.TZ)
	case d.Misfire != MisfireOnce && d.Misfire != MisfireSkip:
		t.Fatalf("Parse(%q): bad misfire %q", line, d.Misfire)
	case d.Retries < 0 || d.Retries > MaxRetries:
		t.Fatalf("Parse(%q): bad retries %d", line, d.Retries)
	case d.Misfire != MisfireOnce && d.IsJob():
		t.Fatalf("Parse(%q): misfire on a job type", line)
	}
	if _, ok := d.Offsets["name"]; !ok {
		t.Fatalf("Parse(%q): no offset for name", line)
	}
	if len(d.Offsets) != len(d.ValueOffsets) {
		t.Fatalf("Parse(%q): offsets %v, value offsets %v", line, d.Offsets, d.ValueOffsets)
	}
	for k, off := range d.Offsets {
		if !strings.HasPrefix(line[off:], k+"=") || d.ValueOffsets[k] != off+len(k)+1 || off < len(Prefix) {
			t.Fatalf("Parse(%q): key %q at %d, value at %d", line, k, off, d.ValueOffsets[k])
		}
	}
}
