package chaos

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/rs/zerolog"
)

// proxies are the in-process toxiproxy proxies between the soak's clients
// and redis-server: one per worker slot and one for the producer, each on
// its own loopback port, so a fault can hit one client or all.
type proxies struct {
	server *toxiproxy.ApiServer
	byName map[string]*toxiproxy.Proxy

	mu   sync.Mutex
	cuts map[string][]span // when each proxy was cut
}

// span is a time interval; an open one has a zero end.
type span struct{ from, to time.Time }

func (s span) overlaps(from, to time.Time) bool {
	end := s.to
	if end.IsZero() {
		end = time.Now()
	}
	return s.from.Before(to) && from.Before(end)
}

const producerProxy = "producer"

func slotProxy(slot int) string { return fmt.Sprintf("w%d", slot) }

// newProxies starts a proxy to upstream for each name.
func newProxies(upstream string, names ...string) (*proxies, error) {
	p := &proxies{
		server: toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop()),
		byName: map[string]*toxiproxy.Proxy{},
		cuts:   map[string][]span{},
	}
	for _, name := range names {
		px := toxiproxy.NewProxy(p.server, name, "127.0.0.1:0", upstream)
		if err := p.server.Collection.Add(px, true); err != nil {
			p.close()
			return nil, fmt.Errorf("proxy %s: %w", name, err)
		}
		p.byName[name] = px
	}
	return p, nil
}

// url is the redis:// URL of the named proxy.
func (p *proxies) url(name string) string {
	px := p.byName[name]
	px.Lock()
	defer px.Unlock()
	return "redis://" + px.Listen
}

// latency adds a latency toxic to the replies of the named proxies.
func (p *proxies) latency(names []string, latency, jitter time.Duration) error {
	body := fmt.Sprintf(`{"name":"latency","type":"latency","stream":"downstream","attributes":{"latency":%d,"jitter":%d}}`,
		latency.Milliseconds(), jitter.Milliseconds())
	for _, n := range names {
		if _, err := p.byName[n].Toxics.AddToxicJson(strings.NewReader(body)); err != nil {
			return fmt.Errorf("latency on %s: %w", n, err)
		}
	}
	return nil
}

// clear removes every toxic of the named proxies.
func (p *proxies) clear(names []string) {
	for _, n := range names {
		p.byName[n].Toxics.ResetToxics(context.Background())
	}
}

// cut closes every connection of the named proxy and refuses new ones
// until restore.
func (p *proxies) cut(name string) {
	p.mu.Lock()
	p.cuts[name] = append(p.cuts[name], span{from: time.Now()})
	p.mu.Unlock()
	p.byName[name].Stop()
}

// restore starts a cut proxy again on its port, retrying for a while if
// another process took the port meanwhile.
func (p *proxies) restore(name string) error {
	var err error
	for attempt := range 50 {
		if err = p.byName[name].Start(); err == nil || err == toxiproxy.ErrProxyAlreadyStarted {
			err = nil
			break
		}
		time.Sleep(time.Duration(attempt+1) * 20 * time.Millisecond)
	}
	p.mu.Lock()
	if c := p.cuts[name]; len(c) > 0 && c[len(c)-1].to.IsZero() {
		c[len(c)-1].to = time.Now()
	}
	p.mu.Unlock()
	if err != nil {
		return fmt.Errorf("restore proxy %s: %w", name, err)
	}
	return nil
}

// cutDuring reports whether the named proxy was cut at any time in
// [from, to].
func (p *proxies) cutDuring(name string, from, to time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.cuts[name] {
		if s.overlaps(from, to) {
			return true
		}
	}
	return false
}

func (p *proxies) close() {
	_ = p.server.Collection.Clear()
}
