package basic

import "github.com/redis/go-redis/v9"

// Start uses what the generated file declares, from the same package: the
// generator must load this package before that file exists.
func Start(rdb redis.UniversalClient) error {
	s, err := NewScheduler(rdb)
	_ = s
	_ = NewClient(rdb)
	return err
}
