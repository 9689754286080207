package runtime

import (
	"fmt"
	"strings"
)

// wrapErr is fmt.Errorf("crontab: "+format+": %w", args..., err) for an err
// that may be this package's own already: the message drops err's leading
// "crontab: ", so the prefix appears once (see "Errors" in doc.go), while
// errors.Is and errors.As still see err.
func wrapErr(err error, format string, args ...any) error {
	return &wrappedErr{msg: "crontab: " + fmt.Sprintf(format, args...), err: err}
}

// wrappedErr is the error of wrapErr.
type wrappedErr struct {
	msg string
	err error
}

func (w *wrappedErr) Error() string {
	return w.msg + ": " + strings.TrimPrefix(w.err.Error(), "crontab: ")
}

func (w *wrappedErr) Unwrap() error { return w.err }
