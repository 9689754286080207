package annotate

import (
	"errors"
	"go/ast"
	goparser "go/parser"
	"go/token"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gocrontab/crontab/runtime/registry"
)

// values returns d without its offsets, for comparisons.
func values(d *Directive) Directive {
	v := *d
	v.Offsets, v.ValueOffsets = nil, nil
	return v
}

// job returns a directive named name with every default, as Parse makes it.
func job(name string) Directive {
	return Directive{
		Name:    name,
		Status:  "active",
		Timeout: 300 * time.Second,
		TZ:      "UTC",
		Misfire: "once",
	}
}

func TestParse(t *testing.T) {
	with := func(d Directive, f func(*Directive)) Directive { f(&d); return d }
	tests := []struct {
		line    string
		want    Directive
		offsets map[string]int // key offset; the value follows the "="
	}{
		{
			line:    `//crontab:name="clean logs" expression="daily:03:00"`,
			want:    with(job("clean logs"), func(d *Directive) { d.Expression = "daily:03:00" }),
			offsets: map[string]int{"name": 10, "expression": 28},
		},
		{
			line:    `//crontab:name=x`,
			want:    job("x"),
			offsets: map[string]int{"name": 10},
		},
		{
			// Trailing and repeated spaces and tabs are fine.
			line:    "//crontab:  name=x \t expression=every:5m\t \r",
			want:    with(job("x"), func(d *Directive) { d.Expression = "every:5m" }),
			offsets: map[string]int{"name": 12, "expression": 21},
		},
		{
			line: `//crontab:name="sms" status=paused timeout=1h30m concurrent=1 tz="America/New_York" retries=3`,
			want: with(job("sms"), func(d *Directive) {
				d.Status, d.Timeout, d.Concurrent, d.TZ, d.Retries = "paused", 90*time.Minute, true, "America/New_York", 3
			}),
			offsets: map[string]int{"name": 10, "status": 21, "timeout": 35, "concurrent": 49, "tz": 62, "retries": 84},
		},
		{
			line: "//crontab:expression=`cron:*/5 * * * *` name=r misfire=skip status=disabled concurrent=F tz=Etc/GMT+5",
			want: with(job("r"), func(d *Directive) {
				d.Expression, d.Misfire, d.Status, d.TZ = "cron:*/5 * * * *", "skip", "disabled", "Etc/GMT+5"
			}),
			offsets: map[string]int{"expression": 10, "name": 40, "misfire": 47, "status": 60, "concurrent": 76, "tz": 89},
		},
		{
			// Go escapes in interpreted strings; raw strings drop carriage returns.
			line:    `//crontab:name="\u00e9t\xc3\xa9 \"q\" \\" expression="\ta\x00"`,
			want:    with(job("été \"q\" \\"), func(d *Directive) { d.Expression = "\ta\x00" }),
			offsets: map[string]int{"name": 10, "expression": 42},
		},
		{
			line:    "//crontab:name=`a\\b` expression=`\r\tx\r`",
			want:    with(job(`a\b`), func(d *Directive) { d.Expression = "\tx" }),
			offsets: map[string]int{"name": 10, "expression": 21},
		},
		{
			// Unicode is fine in names, bare or quoted; an expression may hold "=" when quoted.
			line:    `//crontab:name=nettoyage-journaux-été expression="a=b"`,
			want:    with(job("nettoyage-journaux-été"), func(d *Directive) { d.Expression = "a=b" }),
			offsets: map[string]int{"name": 10, "expression": 40},
		},
		{
			line:    `//crontab:name=x timeout=1ms retries=100`,
			want:    with(job("x"), func(d *Directive) { d.Timeout, d.Retries = time.Millisecond, 100 }),
			offsets: map[string]int{"name": 10, "timeout": 17, "retries": 29},
		},
		{
			line:    `//crontab:name=x timeout=24h retries=0 concurrent=false`,
			want:    with(job("x"), func(d *Directive) { d.Timeout = 24 * time.Hour }),
			offsets: map[string]int{"name": 10, "timeout": 17, "retries": 29, "concurrent": 39},
		},
		{
			line: `//crontab:name=x max_running=50 rate=100/s priority=0`,
			want: with(job("x"), func(d *Directive) {
				d.MaxRunning, d.Rate = 50, registry.Rate{N: 100, Per: time.Second}
			}),
			offsets: map[string]int{"name": 10, "max_running": 17, "rate": 32, "priority": 43},
		},
		{
			line: `//crontab:name=x expression=every:5s concurrent=true max_running=1048576`,
			want: with(job("x"), func(d *Directive) {
				d.Expression, d.Concurrent, d.MaxRunning = "every:5s", true, 1<<20
			}),
			offsets: map[string]int{"name": 10, "expression": 17, "concurrent": 37, "max_running": 53},
		},
		{
			// max_running=1 on a scheduled task that is not concurrent
			// says what the lock does; 0 is no cap.
			line: "//crontab:name=x max_running=1 rate=`1048576/24h`",
			want: with(job("x"), func(d *Directive) {
				d.MaxRunning, d.Rate = 1, registry.Rate{N: 1 << 20, Per: 24 * time.Hour}
			}),
			offsets: map[string]int{"name": 10, "max_running": 17, "rate": 31},
		},
		{
			line:    `//crontab:name=x max_running=0 rate=1/1ms priority=0`,
			want:    with(job("x"), func(d *Directive) { d.Rate = registry.Rate{N: 1, Per: time.Millisecond} }),
			offsets: map[string]int{"name": 10, "max_running": 17, "rate": 31, "priority": 42},
		},
		{
			line:    `//crontab:name=x expression=every:1h jitter=10m`,
			want:    with(job("x"), func(d *Directive) { d.Expression, d.Jitter = "every:1h", 10*time.Minute }),
			offsets: map[string]int{"name": 10, "expression": 17, "jitter": 37},
		},
		{
			line:    `//crontab:name=x jitter=24h expression=every:1h`,
			want:    with(job("x"), func(d *Directive) { d.Expression, d.Jitter = "every:1h", 24*time.Hour }),
			offsets: map[string]int{"name": 10, "jitter": 17, "expression": 28},
		},
		{
			// jitter=0 is no jitter, on a job type too.
			line:    `//crontab:name=x jitter=0s`,
			want:    job("x"),
			offsets: map[string]int{"name": 10, "jitter": 17},
		},
		{
			line:    `//crontab:name="` + strings.Repeat("n", 200) + `"`,
			want:    job(strings.Repeat("n", 200)),
			offsets: map[string]int{"name": 10},
		},
	}
	for _, tt := range tests {
		t.Run("", func(t *testing.T) {
			d, err := Parse(tt.line)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.line, err)
			}
			if got := values(d); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Parse(%q)\n got %+v\nwant %+v", tt.line, got, tt.want)
			}
			if !maps.Equal(d.Offsets, tt.offsets) {
				t.Errorf("Parse(%q).Offsets = %v, want %v", tt.line, d.Offsets, tt.offsets)
			}
			wantValues := make(map[string]int)
			for k, off := range tt.offsets {
				wantValues[k] = off + len(k) + 1
			}
			if !maps.Equal(d.ValueOffsets, wantValues) {
				t.Errorf("Parse(%q).ValueOffsets = %v, want %v", tt.line, d.ValueOffsets, wantValues)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	type e = Error
	tests := []struct {
		line string
		want []e
	}{
		// Required key, prefix, encoding.
		{`//crontab:`, []e{{0, "missing required key name"}}},
		{`//crontab:  	 `, []e{{0, "missing required key name"}}},
		{`//crontab:expression=every:5s`, []e{{0, "missing required key name"}}},
		{`// crontab:name=x`, []e{{0, `not a crontab directive: want prefix "//crontab:"`}}},
		{`//go:generate x`, []e{{0, `not a crontab directive: want prefix "//crontab:"`}}},
		{"//crontab:name=\"x\xffy\"", []e{{17, "invalid UTF-8 encoding"}}},

		// Keys.
		{`//crontab:nmae="x"`, []e{{10, `unknown key "nmae"; did you mean "name"?`}}},
		{`//crontab:name=x timout=5s`, []e{{17, `unknown key "timout"; did you mean "timeout"?`}}},
		{`//crontab:name=x Status=paused`, []e{{17, `unknown key "Status"; did you mean "status"?`}}},
		{`//crontab:name=x schedule=every:5s`, []e{{17, `unknown key "schedule"; did you mean "expression"?`}}},
		{`//crontab:name=x color=red`, []e{{17, `unknown key "color"`}}},
		{`//crontab:name=x ab=1`, []e{{17, `unknown key "ab"`}}},
		{`//crontab:name=x t=1`, []e{{17, `unknown key "t"; did you mean "tz"?`}}},
		{`//crontab:name="a" name="b"`, []e{{19, `duplicate key "name"`}}},
		{`//crontab:name=x timeout=5s timeout=5x`, []e{{28, `duplicate key "timeout"`}}},
		{`//crontab:name=x =5s`, []e{{17, `empty key before "="`}}},
		{`//crontab:=`, []e{{0, "missing required key name"}, {10, `empty key before "="`}}},

		// Separators.
		{`//crontab:name`, []e{{10, `missing "=" after key "name"`}}},
		{`//crontab:name "x"`, []e{{10, `missing "=" after key "name"`}}},
		{`//crontab:name x=y`, []e{{10, `missing "=" after key "name"`}, {15, `unknown key "x"`}}},
		{`//crontab:name = "x"`, []e{{14, `unexpected space before "="`}}},
		{`//crontab:name= "x"`, []e{{15, `unexpected space after "="`}}},
		{`//crontab:name =`, []e{{14, `unexpected space before "="`}, {16, `missing value for key "name"`}}},
		{`//crontab:name=`, []e{{15, `missing value for key "name"`}}},
		{`//crontab:name= timeout=5s`, []e{{15, `missing value for key "name"`}}},
		{`//crontab:name:"x"`, []e{{14, `want "=" after key "name", got ':'`}}},
		{`//crontab:name:=x`, []e{{14, `want "=" after key "name", got ':'`}}},
		{`//crontab:name"x"`, []e{{14, `want "=" after key "name", got '"'`}}},

		// Garbage between pairs.
		{`//crontab:name="x",timeout=5s`, []e{{18, `unexpected ',' after value; separate pairs with spaces`}}},
		{`//crontab:name="x"timeout=5s`, []e{{18, `unexpected 't' after value; separate pairs with spaces`}}},
		{`//crontab:name="x" , timeout=5s`, []e{{19, `unexpected ','; want key=value`}}},
		{`//crontab:name="x" "y" timeout=5s`, []e{{19, `unexpected '"'; want key=value`}}},
		{`//crontab:name=x // comment`, []e{{17, `unexpected '/'; want key=value`}, {20, `unknown key "comment"`}, {20, `missing "=" after key "comment"`}}},
		{`//crontab:name=x,timeout=5s`, []e{{24, `unexpected "=" in unquoted value; quote the value, or separate pairs with spaces`}}},

		// Quoting.
		{`//crontab:name="abc`, []e{{15, "unterminated quoted value"}}},
		{`//crontab:name="abc\"`, []e{{15, "unterminated quoted value"}}},
		{`//crontab:name="abc\`, []e{{15, "unterminated quoted value"}}},
		{"//crontab:name=`abc", []e{{15, "unterminated raw value"}}},
		{`//crontab:name="a\qb" timeout=5x`, []e{{17, "invalid escape sequence in quoted value"}, {30, `timeout: invalid duration "5x"`}}},
		{`//crontab:name="\x4" tz="\'"`, []e{{16, "invalid escape sequence in quoted value"}, {25, "invalid escape sequence in quoted value"}}},
		{`//crontab:name="\ud800"`, []e{{16, "invalid escape sequence in quoted value"}}},
		{`//crontab:name='clean logs' timeout=5s`, []e{{15, "single quotes do not quote a value; use \"...\" or `...`"}}},
		{`//crontab:name=foo"bar baz" timeout=5x`, []e{{18, `unexpected '"' in unquoted value; quote the whole value`}, {36, `timeout: invalid duration "5x"`}}},
		{`//crontab:name=bob's`, []e{{18, `unexpected '\'' in unquoted value; quote the whole value`}}},
		{"//crontab:name=a\u00a0b", []e{{16, "unexpected character U+00A0 in unquoted value; quote it as an escape"}}},

		// Values.
		{`//crontab:name=""`, []e{{15, "name: must not be empty"}}},
		{`//crontab:name="` + strings.Repeat("n", 201) + `"`, []e{{15, "name: longer than 200 bytes (201)"}}},
		{`//crontab:name="a\tb"`, []e{{15, "name: contains non-printable character U+0009"}}},
		{`//crontab:name="a\u202eb"`, []e{{15, "name: contains non-printable character U+202E"}}},
		{`//crontab:name="\xff"`, []e{{15, "name: invalid UTF-8"}}},
		{`//crontab:name=" x"`, []e{{15, "name: must not start or end with a space"}}},
		{`//crontab:name=x expression=""`, []e{{28, "expression: must not be empty; leave the key out to declare a job type"}}},
		{`//crontab:name=x status=on`, []e{{24, `status: want active, paused or disabled, got "on"`}}},
		{`//crontab:name=x status=Active`, []e{{24, `status: want active, paused or disabled, got "Active"`}}},
		{`//crontab:name=x timeout=5x`, []e{{25, `timeout: invalid duration "5x"`}}},
		{`//crontab:name=x timeout=30`, []e{{25, `timeout: invalid duration "30"`}}},
		{`//crontab:name=x timeout=0s`, []e{{25, `timeout: must be positive, got "0s"`}}},
		{`//crontab:name=x timeout=-1m`, []e{{25, `timeout: must be positive, got "-1m"`}}},
		{`//crontab:name=x timeout=999us`, []e{{25, `timeout: must be at least 1ms, got "999us"`}}},
		{`//crontab:name=x timeout=24h0m0.001s`, []e{{25, `timeout: must be at most 24h, got "24h0m0.001s"`}}},
		{`//crontab:name=x concurrent=yes`, []e{{28, `concurrent: invalid boolean "yes", want true or false`}}},
		{`//crontab:name=x tz=""`, []e{{20, "tz: must not be empty"}}},
		{`//crontab:name=x tz="America/New York"`, []e{{20, `tz: invalid zone name "America/New York": contains a space`}}},
		{`//crontab:name=x tz="UTC\x01"`, []e{{20, `tz: invalid zone name "UTC\x01": contains character U+0001`}}},
		{`//crontab:name=x tz=Local`, []e{{20, `tz: "Local" depends on each machine's settings; name a zone such as "UTC" or "Europe/Berlin"`}}},
		{`//crontab:name=x expression=every:5s misfire=later`, []e{{45, `misfire: want once or skip, got "later"`}}},
		{`//crontab:name=x retries=x`, []e{{25, `retries: invalid integer "x"`}}},
		{`//crontab:name=x retries=1.5`, []e{{25, `retries: invalid integer "1.5"`}}},
		{`//crontab:name=x retries=-1`, []e{{25, `retries: must be between 0 and 100, got "-1"`}}},
		{`//crontab:name=x retries=101`, []e{{25, `retries: must be between 0 and 100, got "101"`}}},
		{`//crontab:name=x retries=99999999999999999999`, []e{{25, `retries: must be between 0 and 100, got "99999999999999999999"`}}},
		{`//crontab:name=x max_running=x`, []e{{29, `max_running: invalid integer "x"`}}},
		{`//crontab:name=x max_running=2.5`, []e{{29, `max_running: invalid integer "2.5"`}}},
		{`//crontab:name=x max_running=-1`, []e{{29, `max_running: must be between 0 and 1048576, got "-1"`}}},
		{`//crontab:name=x max_running=1048577`, []e{{29, `max_running: must be between 0 and 1048576, got "1048577"`}}},
		{`//crontab:name=x max_running=99999999999999999999`, []e{{29, `max_running: must be between 0 and 1048576, got "99999999999999999999"`}}},
		{`//crontab:name=x priority=high`, []e{{26, `priority: invalid integer "high"`}}},
		{`//crontab:name=x priority=-1001`, []e{{26, `priority: must be between -1000 and 1000, got "-1001"`}}},
		{`//crontab:name=x priority=1001`, []e{{26, `priority: must be between -1000 and 1000, got "1001"`}}},
		{`//crontab:name=x priority=-99999999999999999999`, []e{{26, `priority: must be between -1000 and 1000, got "-99999999999999999999"`}}},
		{`//crontab:name=x expression=every:1h jitter=soon`, []e{{44, `jitter: invalid duration "soon"`}}},
		{`//crontab:name=x expression=every:1h jitter=-1s`, []e{{44, `jitter: must not be negative, got "-1s"`}}},
		{`//crontab:name=x expression=every:1h jitter=24h0m1s`, []e{{44, `jitter: must be at most 24h, got "24h0m1s"`}}},
		{`//crontab:name=x expression=every:1h jitter=1.5ms`, []e{{44, `jitter: must be whole milliseconds, got "1.5ms"`}}},
		{`//crontab:name=x rate=100`, []e{{22, `rate: invalid rate "100": want N/D, such as 100/s or 5/1m`}}},
		{`//crontab:name=x rate=""`, []e{{22, `rate: invalid rate "": want N/D, such as 100/s or 5/1m`}}},
		{`//crontab:name=x rate=0/s`, []e{{22, `rate: invalid rate "0/s": count "0": want a positive integer`}}},
		{`//crontab:name=x rate=-5/s`, []e{{22, `rate: invalid rate "-5/s": count "-5": want a positive integer`}}},
		{`//crontab:name=x rate=x/s`, []e{{22, `rate: invalid rate "x/s": count "x": want a positive integer`}}},
		{`//crontab:name=x rate=1048577/s`, []e{{22, `rate: invalid rate "1048577/s": count 1048577: want 1 to 1048576`}}},
		{`//crontab:name=x rate=5/2d`, []e{{22, `rate: invalid rate "5/2d": window "2d": want a duration, such as s, 1m or 500ms`}}},
		{`//crontab:name=x rate=5/999us`, []e{{22, `rate: invalid rate "5/999us": window 999µs: want 1ms to 24h0m0s`}}},
		{`//crontab:name=x rate=5/24h0m1s`, []e{{22, `rate: invalid rate "5/24h0m1s": window 24h0m1s: want 1ms to 24h0m0s`}}},
		{`//crontab:name=x rate=5/1.5ms`, []e{{22, `rate: invalid rate "5/1.5ms": window 1.5ms: want whole milliseconds`}}},
		{`//crontab:name=x rate="5 / s"`, []e{{22, `rate: invalid rate "5 / s": count "5 ": want a positive integer`}}},
		{`//crontab:name=x timeout="` + strings.Repeat("9", 50) + `"`, []e{{25, `timeout: invalid duration "` + strings.Repeat("9", 40) + `"...`}}},

		// Keys that apply to one kind of type only.
		{`//crontab:name=x expression="" retries=0`, []e{{28, "expression: must not be empty; leave the key out to declare a job type"}}},
		{`//crontab:name=x misfire=skip`, []e{{17, "misfire applies only to scheduled tasks, which have an expression"}}},
		{`//crontab:name=x expression=every:5s max_running=2`, []e{{37, "max_running=2 needs concurrent=true: a scheduled task that is not concurrent already runs at most once at a time; set concurrent=true or drop max_running"}}},
		{`//crontab:name=x max_running=3 concurrent=false expression=every:5s`, []e{{17, "max_running=3 needs concurrent=true: a scheduled task that is not concurrent already runs at most once at a time; set concurrent=true or drop max_running"}}},
		{`//crontab:name=x expression=every:5s rate=5/s`, []e{{37, "rate applies only to job types (no expression): the fires of a scheduled task are not rate-limited yet; drop rate, or cap the task with max_running"}}},
		{`//crontab:name=x jitter=1m`, []e{{17, "jitter applies only to scheduled tasks, which have an expression: a job runs when it is due"}}},
		{`//crontab:name=x expression=every:5s priority=-5`, []e{{37, "priority applies only to job types (no expression): the fires of a scheduled task run at their instant; drop priority"}}},

		// Every error of the line, sorted by offset.
		{
			`//crontab:status=on timeout=5x nmae=x name=x name=y concurrent=maybe tz="A B" misfire=x retries=x`,
			[]e{
				{17, `status: want active, paused or disabled, got "on"`},
				{28, `timeout: invalid duration "5x"`},
				{31, `unknown key "nmae"; did you mean "name"?`},
				{45, `duplicate key "name"`},
				{63, `concurrent: invalid boolean "maybe", want true or false`},
				{72, `tz: invalid zone name "A B": contains a space`},
				{86, `misfire: want once or skip, got "x"`},
				{96, `retries: invalid integer "x"`},
			},
		},
	}
	for _, tt := range tests {
		t.Run("", func(t *testing.T) {
			d, err := Parse(tt.line)
			if err == nil {
				t.Fatalf("Parse(%q) = %+v, want errors", tt.line, d)
			}
			if d != nil {
				t.Errorf("Parse(%q) returned a directive with errors", tt.line)
			}
			var list ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("Parse(%q) error %T, want ErrorList", tt.line, err)
			}
			var got []e
			for _, x := range list {
				got = append(got, *x)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Parse(%q) errors:\n got %+v\nwant %+v", tt.line, got, tt.want)
			}
		})
	}
}

func TestDefaults(t *testing.T) {
	d, err := Parse(`//crontab:name=x`)
	if err != nil {
		t.Fatal(err)
	}
	want := Directive{
		Name:       "x",
		Expression: "",
		Status:     DefaultStatus,
		TZ:         DefaultTZ,
		Misfire:    DefaultMisfire,
		Timeout:    DefaultTimeout,
		Concurrent: false,
		Retries:    DefaultRetries,
	}
	if got := values(d); !reflect.DeepEqual(got, want) {
		t.Errorf("defaults:\n got %+v\nwant %+v", got, want)
	}
	// The documented values of the defaults.
	if DefaultStatus != "active" || DefaultTimeout != 300*time.Second || DefaultTZ != "UTC" ||
		DefaultMisfire != "once" || DefaultRetries != 0 {
		t.Errorf("defaults drifted from the manual")
	}
	if !d.IsJob() {
		t.Errorf("a directive without expression is not a job type")
	}
	if len(d.Offsets) != 1 || len(d.ValueOffsets) != 1 {
		t.Errorf("offsets of keys left out: %v %v", d.Offsets, d.ValueOffsets)
	}
	// Spelling a default out gives the same directive.
	d2, err := Parse(`//crontab:name=x status=active timeout=5m concurrent=false tz=UTC retries=0`)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(values(d2), want) {
		t.Errorf("explicit defaults: got %+v", values(d2))
	}
	d3, err := Parse(`//crontab:name=x expression=hourly:30 misfire=once`)
	if err != nil {
		t.Fatal(err)
	}
	if d3.IsJob() || d3.Misfire != "once" {
		t.Errorf("scheduled task: got %+v", values(d3))
	}
}

func TestString(t *testing.T) {
	tests := []struct {
		d    Directive
		want string
	}{
		{Directive{Name: "x"}, `//crontab:name="x"`},
		{job("clean logs"), `//crontab:name="clean logs"`},
		{
			Directive{Name: "r", Expression: "cron:*/5 * * * *", Status: "paused", Timeout: 90 * time.Minute,
				Concurrent: true, TZ: "Europe/Berlin", Misfire: "skip", Retries: 2},
			`//crontab:name="r" expression="cron:*/5 * * * *" status=paused timeout=1h30m concurrent=true tz="Europe/Berlin" misfire=skip retries=2`,
		},
		{
			Directive{Name: "f", MaxRunning: 50, Rate: registry.Rate{N: 5, Per: time.Minute}, Priority: -3},
			`//crontab:name="f" max_running=50 rate="5/1m" priority=-3`,
		},
		{Directive{Name: "f", Rate: registry.Rate{N: 100, Per: 1500 * time.Millisecond}}, `//crontab:name="f" rate="100/1.5s"`},
		{Directive{Name: "j", Expression: "every:1h", Jitter: 90 * time.Minute}, `//crontab:name="j" expression="every:1h" jitter=1h30m`},
		{Directive{Name: "j", Expression: "every:1s", Jitter: 250 * time.Millisecond}, `//crontab:name="j" expression="every:1s" jitter=250ms`},
		{Directive{Name: "t\"\n", Timeout: time.Hour}, `//crontab:name="t\"\n" timeout=1h`},
		{Directive{Name: "t", Timeout: 10 * time.Minute}, `//crontab:name="t" timeout=10m`},
		{Directive{Name: "t", Timeout: 1500 * time.Millisecond}, `//crontab:name="t" timeout=1.5s`},
		{Directive{Name: "t", Timeout: 24*time.Hour + time.Second}, `//crontab:name="t" timeout=24h0m1s`},
	}
	for _, tt := range tests {
		if got := tt.d.String(); got != tt.want {
			t.Errorf("String() = %s, want %s", got, tt.want)
		}
	}
}

func TestIsDirective(t *testing.T) {
	for line, want := range map[string]bool{
		`//crontab:name=x`:   true,
		`//crontab:`:         true,
		`// crontab:name=x`:  false,
		`//crontab name=x`:   false,
		`/*crontab:name=x*/`: false,
		`//go:generate`:      false,
		``:                   false,
	} {
		if got := IsDirective(line); got != want {
			t.Errorf("IsDirective(%q) = %v, want %v", line, got, want)
		}
	}
}

func TestErrorList(t *testing.T) {
	_, err := Parse(`//crontab:name=x status=on timeout=5x`)
	want := "offset 24: status: want active, paused or disabled, got \"on\"\n" +
		"offset 35: timeout: invalid duration \"5x\""
	if err == nil || err.Error() != want {
		t.Errorf("Error() = %q, want %q", err, want)
	}
	var e *Error
	if !errors.As(err, &e) || e.Offset != 24 {
		t.Errorf("errors.As(*Error) = %v", e)
	}
	_, err = Parse(`//crontab:`)
	if err == nil || err.Error() != "offset 0: missing required key name" {
		t.Errorf("Error() = %q", err)
	}
}

func TestSuggest(t *testing.T) {
	for key, want := range map[string]string{
		"nmae": "name", "NAME": "name", "nam": "name", "names": "name",
		"expresion": "expression", "expr": "expression", "cron": "expression",
		"stauts": "status", "stat": "status",
		"timeuot": "timeout", "ttl": "timeout",
		"concurent": "concurrent", "concurrency": "concurrent",
		"TZ": "tz", "timezone": "tz", "location": "tz",
		"misfires": "misfire", "retry": "retries", "retires": "retries",
		"maxrunning": "max_running", "max-running": "max_running", "max_runing": "max_running",
		"max_concurrency": "max_running", "max_concurrent": "max_running", "global_concurrency": "max_running",
		"rates": "rate", "rate_limit": "rate", "ratelimit": "rate", "limiter": "rate", "throttle": "rate",
		"jiter": "jitter", "jitte": "jitter", "Jitter": "jitter",
		"priorty": "priority", "Priority": "priority", "prio": "priority", "weight": "priority",
		"x": "", "ab": "", "payload": "", strings.Repeat("name", 20): "",
	} {
		if got := suggest(key); got != want {
			t.Errorf("suggest(%q) = %q, want %q", key, got, want)
		}
	}
}

// TestOffsetsWithGoAST checks that offsets added to ast.Comment.Slash give
// the position of the key or value at fault, as the manual says.
func TestOffsetsWithGoAST(t *testing.T) {
	const src = `package p

// Report sends the report.
//
//crontab:name="report" expression="daily:03:00" timeout=5x
type Report struct{}
`
	fset := token.NewFileSet()
	f, err := goparser.ParseFile(fset, "p.go", src, goparser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var c *ast.Comment
	for _, cg := range f.Comments {
		for _, x := range cg.List {
			if IsDirective(x.Text) {
				c = x
			}
		}
	}
	if c == nil {
		t.Fatal("no directive found")
	}
	_, err = Parse(c.Text)
	var list ErrorList
	if !errors.As(err, &list) || len(list) != 1 {
		t.Fatalf("Parse: %v", err)
	}
	pos := fset.Position(c.Slash + token.Pos(list[0].Offset))
	if got, want := pos.String()+": "+list[0].Msg, `p.go:5:58: timeout: invalid duration "5x"`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}

	d, err := Parse(strings.Replace(c.Text, "5x", "5s", 1))
	if err != nil {
		t.Fatal(err)
	}
	// A caller points an error in the expression at its value.
	pos = fset.Position(c.Slash + token.Pos(d.ValueOffsets["expression"]))
	if pos.Column != 36 {
		t.Errorf("expression value at column %d, want 36", pos.Column)
	}
}

var benchLine = `//crontab:name="clean logs" expression="daily:03:00" timeout=10m concurrent=true tz="Europe/Berlin"`

func BenchmarkParse(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchLine)))
	for b.Loop() {
		if _, err := Parse(benchLine); err != nil {
			b.Fatal(err)
		}
	}
}
