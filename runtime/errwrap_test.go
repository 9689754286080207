package runtime

import (
	"errors"
	"fmt"
	"testing"
)

// TestWrapErrOnePrefix: a wrapped error of this package reads with one
// "crontab: " and still matches its chain.
func TestWrapErrOnePrefix(t *testing.T) {
	inner := fmt.Errorf("crontab: type %q: %w", "mail", ErrNotFound)
	for _, tc := range []struct {
		err  error
		want string
	}{
		{wrapErr(inner, "jobs waiting: type %q", "mail"), `crontab: jobs waiting: type "mail": type "mail": not found`},
		{wrapErr(errors.New("dial tcp: refused"), "heartbeat"), "crontab: heartbeat: dial tcp: refused"},
		{wrapErr(wrapErr(inner, "a"), "b"), `crontab: b: a: type "mail": not found`},
	} {
		if tc.err.Error() != tc.want {
			t.Errorf("%q, want %q", tc.err, tc.want)
		}
		if !errors.Is(tc.err, ErrNotFound) && errors.Unwrap(tc.err) == nil {
			t.Errorf("%q unwraps to nothing", tc.err)
		}
	}
	if !errors.Is(wrapErr(inner, "x"), ErrNotFound) {
		t.Error("errors.Is does not see through wrapErr")
	}
}
