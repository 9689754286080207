package schedule

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

// This file parses crontab(5) time fields into bitsets, following the rules
// of cronie's entry.c (load_entry, get_list, get_range, get_number), and
// stricter where cronie silently accepts nonsense (steps longer than the
// field, schedules that never fire). Beyond crontab(5) it parses the
// calendar rules of Quartz and hashicorp/cronexpr: L, LW and NW in the
// day-of-month field, DL and D#K in the day-of-week field.

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
	cal    calendarRules
	flags  cronFlags
	text   string // the fields joined by single spaces, or the @macro
	// days[n-28][w] are the days (bits 1-31) the two day fields match in a
	// month of n days whose 1st is weekday w (0 = Sunday), with cronie's
	// day-of-month/day-of-week rule applied. Every day the schedule fires
	// on is looked up here.
	days [4][7]uint32
}

// calendarRules are the day rules beyond crontab(5), with the semantics of
// Quartz and hashicorp/cronexpr. Each adds days to its field's set, month by
// month.
type calendarRules struct {
	last        bool   // day-of-month L: the last day of the month
	lastWeekday bool   // day-of-month LW: the last Monday-Friday of the month
	nearest     uint64 // day-of-month NW (bits 1-31): the Monday-Friday nearest day N, in the same month
	lastDow     uint8  // day-of-week DL (bits 0-6): the last weekday D of the month
	nthDow      uint64 // day-of-week D#K (bit (K-1)*7+D): the Kth weekday D of the month
}

// isZero reports whether no calendar rule is set.
func (c *calendarRules) isZero() bool { return *c == calendarRules{} }

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
		set, err := parseCronField(i, f, &spec.cal)
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
	spec.buildDays()
	if err := spec.checkCanFire(fields); err != nil {
		return cronSpec{}, err
	}
	return spec, nil
}

// checkCanFire rejects a schedule that never fires. A month's matching days
// depend only on its length and the weekday of its 1st, and from 1970 to
// 2099 every month of the month field has each of its lengths (28 and 29
// for February) with each weekday of the 1st, so the schedule fires iff one
// entry of the days table for such a month is not empty.
func (s *cronSpec) checkCanFire(fields []string) error {
	for m := 1; m <= 12; m++ {
		if s.month&(1<<m) == 0 {
			continue
		}
		shortest := daysInMonth[m]
		if m == 2 {
			shortest = 28
		}
		for n := shortest; n <= daysInMonth[m]; n++ {
			for w := range 7 {
				if s.days[n-28][w] != 0 {
					return nil
				}
			}
		}
	}
	if s.andDays() && !s.cal.last && !s.cal.lastWeekday {
		// The day-of-month field alone already rules out every month.
		dom, possible := s.dom|s.cal.nearest, false
		for m := 1; m <= 12; m++ {
			possible = possible || s.month&(1<<m) != 0 && dom&(uint64(1)<<(daysInMonth[m]+1)-1) != 0
		}
		if !possible {
			return fmt.Errorf("cron: expression %q never fires: no month in month field %q has a day in day-of-month field %q",
				s.text, fields[fieldMonth], fields[fieldDom])
		}
	}
	return fmt.Errorf("cron: expression %q never fires: no day of a month in month field %q matches both day-of-month field %q and day-of-week field %q",
		s.text, fields[fieldMonth], fields[fieldDom], fields[fieldDow])
}

// buildDays fills the days table: for each month length n and weekday of
// the 1st, the days the day fields match, with cronie's rule (a day must
// match both fields when either starts with *, else either), where each
// field's set holds its plain values and the days its calendar rules pick in
// such a month.
func (s *cronSpec) buildDays() {
	for first := range 7 {
		// The days whose weekday is in the plain day-of-week set, and the
		// Kth weekday D of the month, in any month whose 1st is first.
		var weekly, nth uint32
		for d := 1; d <= 31; d++ {
			w := (first + d - 1) % 7
			if s.dow&(1<<w) != 0 {
				weekly |= 1 << d
			}
			if s.cal.nthDow&(1<<((d-1)/7*7+w)) != 0 {
				nth |= 1 << d
			}
		}
		for n := 28; n <= 31; n++ {
			inMonth := uint32(1)<<(n+1) - 2
			dom, dow := uint32(s.dom)&inMonth, (weekly|nth)&inMonth
			if !s.cal.isZero() {
				dom |= s.calendarDom(n, first)
				for d := n - 6; d <= n; d++ { // the last week
					if s.cal.lastDow&(1<<((first+d-1)%7)) != 0 {
						dow |= 1 << d
					}
				}
			}
			if s.andDays() {
				s.days[n-28][first] = dom & dow
			} else {
				s.days[n-28][first] = dom | dow
			}
		}
	}
}

// calendarDom returns the days L, LW and NW pick in a month of n days whose
// 1st is weekday first (0 = Sunday).
func (s *cronSpec) calendarDom(n, first int) uint32 {
	// nearest is the Monday-Friday nearest day d within the month, as in
	// cronexpr's workdayOfMonth: a Saturday moves to the Friday before,
	// unless it is the 1st (then the Monday after, the 3rd); a Sunday
	// moves to the Monday after, unless it is the last day (then the
	// Friday before).
	nearest := func(d int) int {
		switch (first + d - 1) % 7 {
		case 6:
			if d > 1 {
				return d - 1
			}
			return d + 2
		case 0:
			if d < n {
				return d + 1
			}
			return d - 2
		}
		return d
	}
	var dom uint32
	if s.cal.last {
		dom |= 1 << n
	}
	if s.cal.lastWeekday {
		dom |= 1 << nearest(n)
	}
	for near := s.cal.nearest & (uint64(1)<<(n+1) - 1); near != 0; near &= near - 1 {
		dom |= 1 << nearest(bits.TrailingZeros64(near))
	}
	return dom
}

// parseCronField parses field number i (fieldMinute...) into a bitset; the
// calendar rules of the day fields go to cal.
func parseCronField(i int, field string, cal *calendarRules) (uint64, error) {
	info := &cronFields[i]
	var set uint64
	for elem := range strings.SplitSeq(field, ",") {
		var bits uint64
		var err error
		var done bool
		switch i {
		case fieldDom:
			done, err = parseDomCalendar(elem, cal)
		case fieldDow:
			done, err = info.parseDowCalendar(elem, cal)
		}
		if !done && err == nil {
			bits, err = info.parseElement(elem)
		}
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

// parseDomCalendar parses a day-of-month element L, LW or NW (N 1-31,
// case-insensitive) into cal. done is false when elem is none of them and
// names no L or W: the caller parses it as a plain element.
func parseDomCalendar(elem string, cal *calendarRules) (done bool, err error) {
	upper := strings.ToUpper(elem)
	switch {
	case strings.ContainsAny(upper, "~?*"):
		return false, nil // the plain parser explains these
	case upper == "L":
		cal.last = true
		return true, nil
	case upper == "LW":
		cal.lastWeekday = true
		return true, nil
	case strings.Contains(upper, "#"):
		return true, fmt.Errorf("%q: nth weekday (\"#\") belongs in the day-of-week field, e.g. 5#3 for the third Friday", elem)
	case !strings.ContainsAny(upper, "LW"):
		return false, nil
	case strings.HasPrefix(upper, "L-"):
		return true, fmt.Errorf("%q: offsets from the last day (\"L-N\", Quartz) are not supported; write the days, or L for the last day", elem)
	case strings.ContainsAny(upper, "-/"):
		return true, fmt.Errorf("%q: \"L\" and \"W\" take no range or step: write L, LW or a single day NW such as 15W", elem)
	case upper == "W":
		return true, fmt.Errorf("%q: \"W\" needs a day: 15W is the weekday nearest the 15th, LW the last weekday of the month", elem)
	case strings.HasSuffix(upper, "W") && isASCIIDigits(upper[:len(upper)-1]):
		v, err := strconv.Atoi(upper[:len(upper)-1])
		if err != nil || v < 1 || v > 31 {
			return true, fmt.Errorf("%q: day %s out of range 1-31", elem, upper[:len(upper)-1])
		}
		cal.nearest |= 1 << v
		return true, nil
	case strings.HasSuffix(upper, "L") && isASCIIDigits(upper[:len(upper)-1]):
		return true, fmt.Errorf("%q: in the day-of-month field \"L\" stands alone (the last day of the month); for the last weekday D of the month write DL in the day-of-week field, e.g. 5L", elem)
	case strings.HasPrefix(upper, "L"):
		return true, fmt.Errorf("%q: \"L\" takes no number after it: write L (the last day of the month) or LW (its last weekday)", elem)
	}
	return true, fmt.Errorf("%q is not a day: want a number 1-31, L, LW or NW (the weekday nearest day N)", elem)
}

// parseDowCalendar parses a day-of-week element DL or D#K (D 0-7 or
// SUN-SAT, K 1-5, case-insensitive) into cal. done is false when elem is
// none of them: the caller parses it as a plain element.
func (info *cronFieldInfo) parseDowCalendar(elem string, cal *calendarRules) (done bool, err error) {
	upper := strings.ToUpper(elem)
	day := func(tok string) (int, error) {
		if strings.ContainsAny(tok, "-/*,") {
			return 0, fmt.Errorf("%q: \"L\" and \"#\" take a single weekday, not a range or step", elem)
		}
		v, _, err := info.parseValue(tok)
		if err != nil {
			return 0, fmt.Errorf("%q: %s", elem, err)
		}
		return v % 7, nil
	}
	switch {
	case strings.ContainsAny(upper, "~?"):
		return false, nil // the plain parser explains these
	case strings.Contains(upper, "#"):
		d, k, _ := strings.Cut(elem, "#")
		switch {
		case d == "":
			return true, fmt.Errorf("%q: missing weekday before \"#\"; 5#3 is the third Friday of the month", elem)
		case k == "":
			return true, fmt.Errorf("%q: missing week number after \"#\"; 5#3 is the third Friday of the month", elem)
		case strings.ContainsAny(k, "-/") || strings.ContainsAny(d, "-/"):
			return true, fmt.Errorf("%q: \"#\" takes a single weekday and week, not a range or step", elem)
		case !isASCIIDigits(k):
			return true, fmt.Errorf("%q: week %q after \"#\" is not a number 1-5", elem, k)
		}
		v, err := day(d)
		if err != nil {
			return true, err
		}
		n, err := strconv.Atoi(k)
		if err != nil || n < 1 || n > 5 {
			return true, fmt.Errorf("%q: week %s out of range 1-5 (a month has at most five of each weekday)", elem, k)
		}
		cal.nthDow |= 1 << ((n-1)*7 + v)
		return true, nil
	case upper == "L":
		return true, fmt.Errorf("%q: in the day-of-week field \"L\" needs a weekday before it (5L is the last Friday of the month); for the last day of the month write L in the day-of-month field", elem)
	case upper == "W" || upper == "LW" || strings.HasSuffix(upper, "W") && !strings.HasSuffix(upper, "-W"):
		if _, _, err := info.parseValue(strings.TrimSuffix(upper, "W")); err == nil || upper == "W" || upper == "LW" {
			return true, fmt.Errorf("%q: nearest weekday (\"W\") belongs in the day-of-month field, e.g. 15W", elem)
		}
		return false, nil
	case strings.Contains(upper, "L") && strings.ContainsAny(upper, "-/"):
		return true, fmt.Errorf("%q: \"L\" takes a single weekday, not a range or step (5L is the last Friday of the month)", elem)
	case strings.HasSuffix(upper, "L"):
		v, err := day(upper[:len(upper)-1])
		if err != nil {
			return true, err
		}
		cal.lastDow |= 1 << v
		return true, nil
	}
	return false, nil
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
		return fmt.Errorf("%q: nth weekday (\"#\") is only allowed in the day-of-week field, e.g. 5#3 for the third Friday", tok)
	case upper == "L" || upper == "LW" ||
		len(upper) > 1 && (upper[len(upper)-1] == 'L' || upper[len(upper)-1] == 'W') && isASCIIDigits(upper[:len(upper)-1]):
		return fmt.Errorf("%q: \"L\" and \"W\" are only allowed in the day-of-month field (L, LW, 15W) and \"L\" in the day-of-week field (5L)", tok)
	case info.nameHint != "":
		return fmt.Errorf("%q is not a number or %s", tok, info.nameHint)
	}
	return fmt.Errorf("%q is not a number", tok)
}
