package schedule

import (
	"fmt"
	"strconv"
	"strings"
)

// This file parses crontab(5) time fields into bitsets, following the rules
// of cronie's entry.c (load_entry, get_list, get_range, get_number), and
// stricter where cronie silently accepts nonsense (steps longer than the
// field, schedules that never fire).

// The five fields of a crontab(5) schedule, in order.
const (
	fieldMinute = iota
	fieldHour
	fieldDom
	fieldMonth
	fieldDow
	numFields
)

// cronFieldInfo describes one field: its name in messages, its bounds and
// its names (names[i] has the value low+i), if any.
type cronFieldInfo struct {
	name      string
	low, high int
	names     []string
	nameHint  string
}

var cronFields = [numFields]cronFieldInfo{
	fieldMinute: {name: "minute", low: 0, high: 59},
	fieldHour:   {name: "hour", low: 0, high: 23},
	fieldDom:    {name: "day-of-month", low: 1, high: 31},
	fieldMonth: {name: "month", low: 1, high: 12, nameHint: "a month name (JAN-DEC)",
		names: []string{"JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"}},
	fieldDow: {name: "day-of-week", low: 0, high: 7, nameHint: "a day name (SUN-SAT)",
		names: []string{"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"}},
}

// cronFlags are cronie's entry flags that change how a schedule matches.
type cronFlags uint8

const (
	flagMinStar  cronFlags = 1 << iota // the minute field starts with *
	flagHourStar                       // the hour field starts with *
	flagDomStar                        // the day-of-month field starts with *
	flagDowStar                        // the day-of-week field starts with *
)

// cronSpec is a parsed crontab(5) schedule: one bitset per field (bit v set
// when value v matches) and cronie's flags.
type cronSpec struct {
	minute uint64 // bits 0-59
	hour   uint64 // bits 0-23
	dom    uint64 // bits 1-31
	month  uint64 // bits 1-12
	dow    uint64 // bits 0-6; 7 (Sunday) is folded into 0
	flags  cronFlags
	text   string // the fields joined by single spaces, or the @macro
}

// wildcard reports whether cronie treats the job as a wildcard job, one that
// follows real time across daylight-saving transitions.
func (s *cronSpec) wildcard() bool { return s.flags&(flagMinStar|flagHourStar) != 0 }

// andDays reports whether a day must match both the day-of-month and the
// day-of-week fields (cronie: either starts with *); otherwise it must match
// either.
func (s *cronSpec) andDays() bool { return s.flags&(flagDomStar|flagDowStar) != 0 }

// cronMacros maps cronie's @macros to the fields they stand for; entry.c
// sets the same bits and flags for them.
var cronMacros = map[string]string{
	"@yearly":   "0 0 1 1 *",
	"@annually": "0 0 1 1 *",
	"@monthly":  "0 0 1 * *",
	"@weekly":   "0 0 * * 0",
	"@daily":    "0 0 * * *",
	"@midnight": "0 0 * * *",
	"@hourly":   "0 * * * *",
}

// daysInMonth is the longest length of each month (February has 29 days in
// leap years).
var daysInMonth = [13]int{0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}

// parseCronSpec parses the text of a cron: expression.
func parseCronSpec(text string) (cronSpec, error) {
	for _, r := range text {
		if (r < ' ' || r > '~') && r != '\t' {
			return cronSpec{}, fmt.Errorf("cron: expression %q contains %q; only printable ASCII characters, spaces and tabs are allowed", text, r)
		}
	}
	fields := strings.FieldsFunc(text, func(r rune) bool { return r == ' ' || r == '\t' })
	if len(fields) == 0 {
		return cronSpec{}, fmt.Errorf("cron: empty expression; want 5 fields (minute hour day-of-month month day-of-week) or an @macro")
	}
	if strings.HasPrefix(fields[0], "@") {
		macro := fields[0]
		expansion, ok := cronMacros[macro]
		if !ok {
			if macro == "@reboot" {
				return cronSpec{}, fmt.Errorf("cron: @reboot is not supported: it names no time; want @hourly, @daily, @midnight, @weekly, @monthly, @yearly or @annually")
			}
			return cronSpec{}, fmt.Errorf("cron: unknown macro %q; want @hourly, @daily, @midnight, @weekly, @monthly, @yearly or @annually", macro)
		}
		if len(fields) > 1 {
			return cronSpec{}, fmt.Errorf("cron: %s takes no fields, but %q follows it", macro, strings.Join(fields[1:], " "))
		}
		spec, err := parseCronSpec(expansion)
		spec.text = macro
		return spec, err
	}
	if len(fields) != numFields {
		hint := ""
		if len(fields) == 6 || len(fields) == 7 {
			hint = "; seconds and years fields are not supported"
		}
		return cronSpec{}, fmt.Errorf("cron: expression %q has %d fields; want 5 (minute hour day-of-month month day-of-week) or an @macro%s",
			strings.Join(fields, " "), len(fields), hint)
	}
	var spec cronSpec
	var sets [numFields]uint64
	for i, f := range fields {
		set, err := parseCronField(i, f)
		if err != nil {
			return cronSpec{}, err
		}
		sets[i] = set
		if f[0] == '*' {
			spec.flags |= [numFields]cronFlags{flagMinStar, flagHourStar, flagDomStar, 0, flagDowStar}[i]
		}
	}
	spec.minute, spec.hour, spec.dom, spec.month = sets[fieldMinute], sets[fieldHour], sets[fieldDom], sets[fieldMonth]
	spec.dow = sets[fieldDow] & 0x7f
	if sets[fieldDow]&(1<<7) != 0 { // make Sundays equivalent, as entry.c does
		spec.dow |= 1
	}
	spec.text = strings.Join(fields, " ")
	if err := spec.checkCanFire(fields); err != nil {
		return cronSpec{}, err
	}
	return spec, nil
}

// checkCanFire rejects a schedule that never fires: when a day must match
// the day-of-month field (always, unless both day fields are restricted, in
// which case any matching weekday will do), some month in the month field
// must have a day in the day-of-month field. Over the 400-year Gregorian
// cycle every valid (month, day) pair falls on every weekday, so the
// day-of-week field cannot make a valid pair impossible.
func (s *cronSpec) checkCanFire(fields []string) error {
	if !s.andDays() {
		return nil
	}
	for m := 1; m <= 12; m++ {
		if s.month&(1<<m) == 0 {
			continue
		}
		if s.dom&(uint64(1)<<(daysInMonth[m]+1)-1) != 0 {
			return nil
		}
	}
	return fmt.Errorf("cron: expression %q never fires: no month in month field %q has a day in day-of-month field %q",
		s.text, fields[fieldMonth], fields[fieldDom])
}

// parseCronField parses field number i (fieldMinute...) into a bitset.
func parseCronField(i int, field string) (uint64, error) {
	info := &cronFields[i]
	var set uint64
	for elem := range strings.SplitSeq(field, ",") {
		bits, err := info.parseElement(elem)
		if err != nil {
			if elem == field {
				return 0, fmt.Errorf("cron: %s field %q: %s", info.name, field, err)
			}
			return 0, fmt.Errorf("cron: %s field %q: element %q: %s", info.name, field, elem, err)
		}
		set |= bits
	}
	return set, nil
}

// parseElement parses one element of a list: *, */STEP, N, N-M or N-M/STEP.
// Its errors name the problem and the value; the caller adds the field.
func (info *cronFieldInfo) parseElement(elem string) (uint64, error) {
	if elem == "" {
		return 0, fmt.Errorf("empty element")
	}
	rng, step, hasStep := strings.Cut(elem, "/")
	var lo, hi int
	isRange := true
	if rng == "*" {
		lo, hi = info.low, info.high
	} else {
		first, last, dash := strings.Cut(rng, "-")
		switch {
		case dash && strings.Contains(last, "-"):
			return 0, fmt.Errorf("malformed range %q: more than one \"-\"", rng)
		case dash && first == "":
			return 0, fmt.Errorf("range %q has no start (negative values are not allowed)", rng)
		case dash && last == "":
			return 0, fmt.Errorf("range %q has no end", rng)
		}
		var err error
		if lo, _, err = info.parseValue(first); err != nil {
			return 0, err
		}
		hi = lo
		if isRange = dash; isRange {
			var name bool
			if hi, name, err = info.parseValue(last); err != nil {
				return 0, err
			}
			if info == &cronFields[fieldDow] && name && hi == 0 && lo > 0 {
				hi = 7 // FRI-SUN is 5-7
			}
			if lo > hi {
				return 0, fmt.Errorf("reversed range (%s is after %s; ranges do not wrap around)", first, last)
			}
		}
	}
	n := 1
	if hasStep {
		if !isRange {
			return 0, fmt.Errorf("step without a range: write %s-%d/%s or */%s", rng, info.high, step, step)
		}
		if step == "" {
			return 0, fmt.Errorf("missing step after \"/\"")
		}
		if !isASCIIDigits(step) {
			return 0, fmt.Errorf("step %q is not a number", step)
		}
		span := info.high - info.low
		v, err := strconv.Atoi(step)
		switch {
		case err != nil || v > span:
			return 0, fmt.Errorf("step %s is larger than the field's span %d-%d", step, info.low, info.high)
		case v == 0:
			return 0, fmt.Errorf("step 0 must be at least 1")
		}
		n = v
	}
	var set uint64
	for v := lo; v <= hi; v += n {
		set |= 1 << v
	}
	return set, nil
}

// parseValue parses a number or, in the month and day-of-week fields, a
// three-letter name (case-insensitive), and checks it against the field's
// bounds. name reports that tok was a name.
func (info *cronFieldInfo) parseValue(tok string) (v int, name bool, err error) {
	if isASCIIDigits(tok) {
		v, err := strconv.Atoi(tok)
		if err != nil || v < info.low || v > info.high {
			return 0, false, fmt.Errorf("value %s out of range %d-%d", tok, info.low, info.high)
		}
		return v, false, nil
	}
	for i, n := range info.names {
		if strings.EqualFold(tok, n) {
			return info.low + i, true, nil
		}
	}
	return 0, false, info.badValue(tok)
}

// badValue explains why tok is not a value, naming the extensions of other
// cron dialects that crontab(5) does not have.
func (info *cronFieldInfo) badValue(tok string) error {
	upper := strings.ToUpper(tok)
	switch {
	case tok == "?":
		return fmt.Errorf("%q is not supported (Quartz syntax); use \"*\"", tok)
	case tok == "*":
		return fmt.Errorf("\"*\" cannot be part of a range; use \"*\" alone or \"*/STEP\"")
	case strings.Contains(tok, "*"):
		return fmt.Errorf("%q: \"*\" must stand alone or be followed by \"/STEP\"", tok)
	case strings.Contains(tok, "~"):
		return fmt.Errorf("%q: random ranges (\"~\") are not supported by crontab(5)", tok)
	case strings.Contains(tok, "#"):
		return fmt.Errorf("%q: nth weekday (\"#\", Quartz syntax) is not supported by crontab(5)", tok)
	case upper == "L" || upper == "LW" ||
		len(upper) > 1 && (upper[len(upper)-1] == 'L' || upper[len(upper)-1] == 'W') && isASCIIDigits(upper[:len(upper)-1]):
		return fmt.Errorf("%q: last/weekday (\"L\", \"W\", Quartz syntax) is not supported by crontab(5)", tok)
	case info.nameHint != "":
		return fmt.Errorf("%q is not a number or %s", tok, info.nameHint)
	}
	return fmt.Errorf("%q is not a number", tok)
}
