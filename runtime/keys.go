package runtime

import "github.com/gocrontab/crontab/internal/rdb"

// keys are the Redis keys of one namespace; the layout is documented in
// internal/rdb, which owns every key, script and stored format.
type keys = rdb.Keys

func newKeys(namespace string) keys { return rdb.NewKeys(namespace) }
