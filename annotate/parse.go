package annotate

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/gocrontab/crontab/runtime/registry"
)

// Parse parses one raw comment line (as in ast.Comment.Text) beginning with
// [Prefix] and returns the directive with every default applied.
//
// On failure the Directive is nil and the error is an [ErrorList] holding
// every error of the line, sorted by offset. Parse never panics and runs in
// time linear in the length of the line.
func Parse(comment string) (*Directive, error) {
	if !IsDirective(comment) {
		return nil, ErrorList{{Offset: 0, Msg: fmt.Sprintf("not a crontab directive: want prefix %q", Prefix)}}
	}
	if !utf8.ValidString(comment) {
		off := 0
		for off < len(comment) {
			r, size := utf8.DecodeRuneInString(comment[off:])
			if r == utf8.RuneError && size == 1 {
				break
			}
			off += size
		}
		return nil, ErrorList{{Offset: off, Msg: "invalid UTF-8 encoding"}}
	}
	p := &parser{
		s: comment,
		i: len(Prefix),
		d: &Directive{
			Status:       DefaultStatus,
			Timeout:      DefaultTimeout,
			TZ:           DefaultTZ,
			Misfire:      DefaultMisfire,
			Retries:      DefaultRetries,
			MaxRunning:   DefaultMaxRunning,
			Priority:     DefaultPriority,
			Offsets:      make(map[string]int, 4),
			ValueOffsets: make(map[string]int, 4),
		},
	}
	for {
		p.skipSpace()
		if p.i >= len(p.s) {
			break
		}
		p.pair()
	}
	p.check()
	if len(p.errs) > 0 {
		p.errs.sort()
		return nil, p.errs
	}
	return p.d, nil
}

// parser holds the state of one Parse call.
type parser struct {
	s    string // the whole comment line
	i    int    // offset of the next byte to read
	d    *Directive
	errs ErrorList

	seen          [len(keys)]bool // keys met so far, valid or not
	valid         [len(keys)]bool // keys whose value was stored in d
	nameSuggested bool            // an unknown key was reported as a misspelled name
}

func (p *parser) errorf(off int, format string, args ...any) {
	p.errs = append(p.errs, &Error{Offset: off, Msg: fmt.Sprintf(format, args...)})
}

func isSpace(c byte) bool {
	switch c {
	case ' ', '\t', '\r', '\n', '\v', '\f':
		return true
	}
	return false
}

func isKeyStart(r rune) bool { return r == '_' || unicode.IsLetter(r) }

func isKeyPart(r rune) bool { return isKeyStart(r) || unicode.IsDigit(r) || r == '-' }

func isQuote(c byte) bool { return c == '"' || c == '`' || c == '\'' }

func (p *parser) peek() (rune, int) { return utf8.DecodeRuneInString(p.s[p.i:]) }

func (p *parser) skipSpace() { p.i = p.spaceEnd(p.i) }

// spaceEnd returns the offset of the first non-space byte at or after i.
func (p *parser) spaceEnd(i int) int {
	for i < len(p.s) && isSpace(p.s[i]) {
		i++
	}
	return i
}

// keyEnd returns the end of the key that starts at i, or i if none does.
func (p *parser) keyEnd(i int) int {
	for j := i; j < len(p.s); {
		r, size := utf8.DecodeRuneInString(p.s[j:])
		if !isKeyPart(r) || (j == i && !isKeyStart(r)) {
			return j
		}
		j += size
	}
	return len(p.s)
}

// startsValue reports whether a value, rather than the next key=value pair
// or the end of the line, starts at i.
func (p *parser) startsValue(i int) bool {
	if i >= len(p.s) || isSpace(p.s[i]) {
		return false
	}
	j := p.keyEnd(i)
	return j >= len(p.s) || p.s[j] != '='
}

// pair parses one key=value pair at p.i, which is not a space.
func (p *parser) pair() {
	keyOff := p.i
	r, _ := p.peek()
	if !isKeyStart(r) && r != '=' {
		p.errorf(p.i, "unexpected %q; want key=value", r)
		p.skipJunk()
		return
	}
	p.i = p.keyEnd(p.i)
	key := p.s[keyOff:p.i]
	good := true
	idx := -1
	switch {
	case key == "":
		p.errorf(keyOff, `empty key before "="`)
		good = false
	default:
		idx = keyIndex(key)
		switch {
		case idx < 0:
			msg := "unknown key " + quote(key)
			if s := suggest(key); s != "" {
				msg += "; did you mean " + strconv.Quote(s) + "?"
				p.nameSuggested = p.nameSuggested || s == keyName
			}
			p.errorf(keyOff, "%s", msg)
			good = false
		case p.seen[idx]:
			p.errorf(keyOff, "duplicate key %q", key)
			good = false
		default:
			p.seen[idx] = true
		}
	}
	valueAt, sepGood := p.separator(key, keyOff)
	good = good && sepGood
	if !valueAt {
		return
	}
	valOff := p.i
	val, ok := p.value()
	p.afterValue()
	if good && ok {
		p.set(idx, keyOff, valOff, val)
	}
}

// separator reads the "=" after key. It reports whether a value starts at
// p.i afterwards, and whether the pair is still free of errors.
func (p *parser) separator(key string, keyOff int) (valueAt, good bool) {
	n := len(p.s)
	switch {
	case p.i < n && p.s[p.i] == '=':
		p.i++
		if p.i < n && !isSpace(p.s[p.i]) {
			return true, true
		}
		if j := p.spaceEnd(p.i); p.startsValue(j) {
			p.errorf(p.i, `unexpected space after "="`)
			p.i = j
			return true, false
		}
		if key != "" {
			p.errorf(p.i, "missing value for key %q", key)
		}
		return false, false
	case p.i >= n || isSpace(p.s[p.i]):
		j := p.spaceEnd(p.i)
		if j < n && p.s[j] == '=' {
			p.errorf(p.i, `unexpected space before "="`)
			if k := p.spaceEnd(j + 1); p.startsValue(k) {
				p.i = k
				return true, false
			}
			p.i = j + 1
			p.errorf(p.i, "missing value for key %q", key)
			return false, false
		}
		p.errorf(keyOff, `missing "=" after key %q`, key)
		if j < n && isQuote(p.s[j]) {
			p.i = j
			return true, false
		}
		return false, false
	default:
		r, size := p.peek()
		p.errorf(p.i, `want "=" after key %q, got %q`, key, r)
		if isQuote(p.s[p.i]) {
			return true, false
		}
		p.i += size
		if p.i < n && p.s[p.i] == '=' { // as in key:=value
			p.i++
		}
		return p.i < n && !isSpace(p.s[p.i]), false
	}
}

// value lexes the value at p.i, which is not a space, and returns it
// decoded. ok is false when an error was reported.
func (p *parser) value() (val string, ok bool) {
	switch p.s[p.i] {
	case '"':
		return p.interpreted()
	case '`':
		return p.raw()
	}
	return p.bare()
}

// afterValue checks that a space or the end of the line follows a quoted
// value.
func (p *parser) afterValue() {
	if p.i >= len(p.s) || isSpace(p.s[p.i]) {
		return
	}
	r, _ := p.peek()
	p.errorf(p.i, "unexpected %q after value; separate pairs with spaces", r)
	if !isKeyStart(r) {
		p.skipJunk()
	}
}

// skipJunk skips what is neither a space nor a key start, quoted strings
// whole, after an error was reported for it.
func (p *parser) skipJunk() {
	for p.i < len(p.s) && !isSpace(p.s[p.i]) {
		r, size := p.peek()
		switch {
		case isKeyStart(r):
			return
		case isQuote(p.s[p.i]):
			p.skipQuoted()
		default:
			p.i += size
		}
	}
}

// skipQuoted skips the string that starts with the quote at p.i, to the
// end of the line if it is not terminated.
func (p *parser) skipQuoted() {
	q := p.s[p.i]
	for p.i++; p.i < len(p.s); p.i++ {
		switch p.s[p.i] {
		case q:
			p.i++
			return
		case '\\':
			if q != '`' {
				p.i++
			}
		}
	}
	p.i = len(p.s)
}

// interpreted lexes a Go interpreted string literal at p.i.
func (p *parser) interpreted() (string, bool) {
	s := p.s
	start := p.i
	var buf []byte // the decoded value, once an escape was met
	ok := true
	i := start + 1
	for {
		if i >= len(s) || s[i] == '\n' {
			p.errorf(start, "unterminated quoted value")
			p.i = i
			return "", false
		}
		switch c := s[i]; c {
		case '"':
			p.i = i + 1
			if !ok {
				return "", false
			}
			if buf == nil {
				return s[start+1 : i], true
			}
			return string(buf), true
		case '\\':
			if buf == nil {
				buf = append(make([]byte, 0, i-start+8), s[start+1:i]...)
			}
			r, multibyte, tail, err := strconv.UnquoteChar(s[i:], '"')
			if err != nil {
				if i+1 >= len(s) {
					i = len(s) // reported as unterminated
					continue
				}
				if ok {
					p.errorf(i, "invalid escape sequence in quoted value")
					ok = false
				}
				_, size := utf8.DecodeRuneInString(s[i+1:])
				i += 1 + size
				continue
			}
			if multibyte {
				buf = utf8.AppendRune(buf, r)
			} else {
				buf = append(buf, byte(r))
			}
			i = len(s) - len(tail)
		default:
			if buf != nil {
				buf = append(buf, c)
			}
			i++
		}
	}
}

// raw lexes a Go raw string literal at p.i.
func (p *parser) raw() (string, bool) {
	start := p.i
	end := strings.IndexByte(p.s[start+1:], '`')
	if end < 0 {
		p.errorf(start, "unterminated raw value")
		p.i = len(p.s)
		return "", false
	}
	end += start + 1
	p.i = end + 1
	v := p.s[start+1 : end]
	if strings.IndexByte(v, '\r') >= 0 {
		v = strings.ReplaceAll(v, "\r", "")
	}
	return v, true
}

// bare lexes an unquoted value at p.i: everything up to the next space.
func (p *parser) bare() (string, bool) {
	start := p.i
	ok := true
	for p.i < len(p.s) && !isSpace(p.s[p.i]) {
		r, size := p.peek()
		switch {
		case r == '\'' && p.i == start:
			p.errorf(p.i, "single quotes do not quote a value; use \"...\" or `...`")
			ok = false
			p.skipQuoted()
			continue
		case r == '"' || r == '`' || r == '\'':
			if ok {
				p.errorf(p.i, "unexpected %q in unquoted value; quote the whole value", r)
				ok = false
			}
			if r != '\'' {
				p.skipQuoted()
				continue
			}
		case r == '=':
			if ok {
				p.errorf(p.i, `unexpected "=" in unquoted value; quote the value, or separate pairs with spaces`)
				ok = false
			}
		case !unicode.IsPrint(r):
			if ok {
				p.errorf(p.i, "unexpected character %U in unquoted value; quote it as an escape", r)
				ok = false
			}
		}
		p.i += size
	}
	return p.s[start:p.i], ok
}

func keyIndex(key string) int {
	for i, k := range keys {
		if k == key {
			return i
		}
	}
	return -1
}

// set validates the value of the known key keys[idx] and stores it in p.d.
func (p *parser) set(idx, keyOff, valOff int, val string) {
	key := keys[idx]
	bad := func(format string, args ...any) {
		p.errorf(valOff, key+": "+format, args...)
	}
	d := p.d
	switch key {
	case keyName:
		if msg := checkName(val); msg != "" {
			bad("%s", msg)
			return
		}
		d.Name = val
	case keyExpression:
		if val == "" {
			bad("must not be empty; leave the key out to declare a job type")
			return
		}
		d.Expression = val
	case keyStatus:
		switch val {
		case StatusActive, StatusPaused, StatusDisabled:
			d.Status = val
		default:
			bad("want active, paused or disabled, got %s", quote(val))
			return
		}
	case keyTimeout:
		t, err := time.ParseDuration(val)
		switch {
		case err != nil:
			bad("invalid duration %s", quote(val))
			return
		case t <= 0:
			bad("must be positive, got %s", quote(val))
			return
		case t < MinTimeout:
			bad("must be at least 1ms, got %s", quote(val))
			return
		case t > MaxTimeout:
			bad("must be at most 24h, got %s", quote(val))
			return
		}
		d.Timeout = t
	case keyConcurrent:
		c, err := strconv.ParseBool(val)
		if err != nil {
			bad("invalid boolean %s, want true or false", quote(val))
			return
		}
		d.Concurrent = c
	case keyTZ:
		if msg := checkTZ(val); msg != "" {
			bad("%s", msg)
			return
		}
		d.TZ = val
	case keyMisfire:
		switch val {
		case MisfireOnce, MisfireSkip:
			d.Misfire = val
		default:
			bad("want once or skip, got %s", quote(val))
			return
		}
	case keyRetries:
		r, err := strconv.Atoi(val)
		switch {
		case errors.Is(err, strconv.ErrRange) || err == nil && (r < 0 || r > MaxRetries):
			bad("must be between 0 and %d, got %s", MaxRetries, quote(val))
			return
		case err != nil:
			bad("invalid integer %s", quote(val))
			return
		}
		d.Retries = r
	case keyMaxRunning:
		n, ok := p.intIn(val, 0, MaxMaxRunning, bad)
		if !ok {
			return
		}
		d.MaxRunning = n
	case keyRate:
		r, msg := parseRate(val)
		if msg != "" {
			bad("%s", msg)
			return
		}
		d.Rate = r
	case keyPriority:
		n, ok := p.intIn(val, MinPriority, MaxPriority, bad)
		if !ok {
			return
		}
		d.Priority = n
	case keyJitter:
		j, err := time.ParseDuration(val)
		switch {
		case err != nil:
			bad("invalid duration %s", quote(val))
			return
		case j < 0:
			bad("must not be negative, got %s", quote(val))
			return
		case j > MaxJitter:
			bad("must be at most 24h, got %s", quote(val))
			return
		case j%time.Millisecond != 0:
			bad("must be whole milliseconds, got %s", quote(val))
			return
		}
		d.Jitter = j
	}
	p.valid[idx] = true
	d.Offsets[key] = keyOff
	d.ValueOffsets[key] = valOff
}

// intIn reads val as a decimal integer in [lo, hi], reporting an error
// with bad otherwise.
func (p *parser) intIn(val string, lo, hi int, bad func(string, ...any)) (int, bool) {
	n, err := strconv.Atoi(val)
	switch {
	case errors.Is(err, strconv.ErrRange) || err == nil && (n < lo || n > hi):
		bad("must be between %d and %d, got %s", lo, hi, quote(val))
		return 0, false
	case err != nil:
		bad("invalid integer %s", quote(val))
		return 0, false
	}
	return n, true
}

// parseRate reads a rate value with registry.ParseRate, the runtime's own
// reader, and returns what is wrong with it, or "".
func parseRate(val string) (registry.Rate, string) {
	r, err := registry.ParseRate(val)
	if err != nil {
		why := strings.TrimPrefix(err.Error(), "rate "+strconv.Quote(val)+": ")
		if i := strings.Index(why, ": "); strings.HasPrefix(why, "rate ") && i > 0 {
			why = why[i+2:] // Rate.Validate's own "rate N/D: " prefix
		}
		return registry.Rate{}, fmt.Sprintf("invalid rate %s: %s", quote(val), why)
	}
	return r, ""
}

func checkName(v string) string {
	switch {
	case v == "":
		return "must not be empty"
	case len(v) > MaxNameLen:
		return fmt.Sprintf("longer than %d bytes (%d)", MaxNameLen, len(v))
	case !utf8.ValidString(v):
		return "invalid UTF-8"
	}
	for _, r := range v {
		if !unicode.IsPrint(r) {
			return fmt.Sprintf("contains non-printable character %U", r)
		}
	}
	if v[0] == ' ' || v[len(v)-1] == ' ' {
		return "must not start or end with a space"
	}
	return ""
}

func checkTZ(v string) string {
	switch {
	case v == "":
		return "must not be empty"
	case v == "Local":
		return `"Local" depends on each machine's settings; name a zone such as "UTC" or "Europe/Berlin"`
	case !utf8.ValidString(v):
		return "invalid UTF-8"
	}
	for _, r := range v {
		if unicode.IsSpace(r) {
			return fmt.Sprintf("invalid zone name %s: contains a space", quote(v))
		}
		if !unicode.IsPrint(r) {
			return fmt.Sprintf("invalid zone name %s: contains character %U", quote(v), r)
		}
	}
	return ""
}

// check applies the rules that involve several keys, after the last pair.
func (p *parser) check() {
	expr := keyIndex(keyExpression)
	if !p.seen[keyIndex(keyName)] && !p.nameSuggested {
		p.errorf(0, "missing required key name")
	}
	if i := keyIndex(keyMisfire); p.valid[i] && !p.seen[expr] {
		p.errorf(p.d.Offsets[keyMisfire], "misfire applies only to scheduled tasks, which have an expression")
	}
	if i := keyIndex(keyMaxRunning); p.valid[i] && p.d.MaxRunning > 1 && p.seen[expr] && !p.d.Concurrent {
		p.errorf(p.d.Offsets[keyMaxRunning], "max_running=%d needs concurrent=true: a scheduled task that is not concurrent already runs at most once at a time; set concurrent=true or drop max_running", p.d.MaxRunning)
	}
	if i := keyIndex(keyRate); p.valid[i] && !p.d.Rate.IsZero() && p.seen[expr] {
		p.errorf(p.d.Offsets[keyRate], "rate applies only to job types (no expression): the fires of a scheduled task are not rate-limited yet; drop rate, or cap the task with max_running")
	}
	if i := keyIndex(keyJitter); p.valid[i] && p.d.Jitter != 0 && !p.seen[expr] {
		p.errorf(p.d.Offsets[keyJitter], "jitter applies only to scheduled tasks, which have an expression: a job runs when it is due")
	}
	if i := keyIndex(keyPriority); p.valid[i] && p.d.Priority != 0 && p.seen[expr] {
		p.errorf(p.d.Offsets[keyPriority], "priority applies only to job types (no expression): the fires of a scheduled task run at their instant; drop priority")
	}
}

// quote quotes s for an error message, shortened if it is long.
func quote(s string) string {
	const max = 40
	if len(s) <= max {
		return strconv.Quote(s)
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + "..."
}
