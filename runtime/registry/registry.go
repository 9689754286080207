package registry

import (
	"fmt"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/gocrontab/crontab/runtime/schedule"
)

// Registry holds the task and job types a process knows. Only a registered
// type can be run by name: a name in Redis that the registry lacks is never
// resolved to code. The zero Registry is empty and ready to use, like the
// one NewRegistry returns. A Registry is safe for concurrent use; it must not
// be copied after first use.
type Registry struct {
	mu     sync.RWMutex
	byName map[string]*Entry
	byType map[reflect.Type]*Entry
	// prioritized: some type has a Priority other than 0.
	prioritized bool
}

// Entry is one registered task or job type: its validated config and its
// parsed schedule. Only a Registry makes one; an Entry is immutable and
// safe for concurrent use.
type Entry struct {
	cfg      TaskConfig
	typ      reflect.Type // the dereferenced type New returns
	loc      *time.Location
	schedule schedule.Schedule // nil for job types
}

// Config returns the entry's config with its defaults applied (see
// TaskConfig) and Class filled in.
func (e *Entry) Config() TaskConfig { return e.cfg }

// Schedule returns the config's Expression parsed in its zone, moved by
// the task's jitter offset (schedule.Offset with schedule.JitterOffset of
// its name and Jitter) when it has a Jitter, or nil for a job type (an
// empty Expression).
func (e *Entry) Schedule() schedule.Schedule { return e.schedule }

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{
		byName: make(map[string]*Entry),
		byType: make(map[reflect.Type]*Entry),
	}
}

// Add validates cfg, applies its defaults and registers it. It fails on a
// duplicate name or type, a bad expression or zone, or an invalid field.
func (r *Registry) Add(cfg TaskConfig) error {
	reg, err := compile(cfg)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byName == nil {
		r.byName = make(map[string]*Entry)
		r.byType = make(map[reflect.Type]*Entry)
	}
	if _, dup := r.byName[reg.cfg.Name]; dup {
		return fmt.Errorf("task %q: registered twice", reg.cfg.Name)
	}
	if other, dup := r.byType[reg.typ]; dup {
		return fmt.Errorf("task %q: type %v is already registered as %q", reg.cfg.Name, reg.typ, other.cfg.Name)
	}
	r.byName[reg.cfg.Name] = reg
	r.byType[reg.typ] = reg
	r.prioritized = r.prioritized || reg.cfg.Priority != 0
	return nil
}

// Prioritized reports whether some registered type has a Priority other
// than 0: in such a namespace every job is indexed by its type's priority
// and claimed by priority (see TaskConfig.Priority).
func (r *Registry) Prioritized() bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.prioritized
}

// compile validates cfg and parses its zone and schedule.
func compile(cfg TaskConfig) (*Entry, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	v := cfg.New()
	if v == nil {
		return nil, fmt.Errorf("task %q: New returned nil", cfg.Name)
	}
	typ := reflect.TypeOf(v)
	if typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	if cfg.Class == "" {
		cfg.Class = typ.PkgPath() + "." + typ.Name()
	}
	loc, err := time.LoadLocation(cfg.TZ)
	if err != nil {
		return nil, fmt.Errorf("task %q: tz %q: %w", cfg.Name, cfg.TZ, err)
	}
	reg := &Entry{cfg: cfg, typ: typ, loc: loc}
	if cfg.Expression != "" {
		reg.schedule, err = schedule.Parse(cfg.Expression, loc)
		if err != nil {
			return nil, fmt.Errorf("task %q: expression %q: %w", cfg.Name, cfg.Expression, err)
		}
		reg.schedule = schedule.Offset(reg.schedule, schedule.JitterOffset(cfg.Name, cfg.Jitter))
	}
	return reg, nil
}

// Lookup returns the config registered under name, with defaults applied.
func (r *Registry) Lookup(name string) (TaskConfig, bool) {
	reg := r.Entry(name)
	if reg == nil {
		return TaskConfig{}, false
	}
	return reg.cfg, true
}

// Entry returns the entry registered under name, or nil when there is none.
func (r *Registry) Entry(name string) *Entry {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.byName[name]
}

// NameOf returns the name under which the type of job is registered. job
// may be a value or a pointer to one.
func (r *Registry) NameOf(job TaskInterface) (string, bool) {
	reg := r.lookupValue(job)
	if reg == nil {
		return "", false
	}
	return reg.cfg.Name, true
}

func (r *Registry) lookupValue(job TaskInterface) *Entry {
	if job == nil {
		return nil
	}
	typ := reflect.TypeOf(job)
	if typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.byType[typ]
}

// Tasks returns every registered config, sorted by name.
func (r *Registry) Tasks() []TaskConfig {
	regs := r.Entries()
	out := make([]TaskConfig, len(regs))
	for i, reg := range regs {
		out[i] = reg.cfg
	}
	return out
}

// Entries returns every entry, sorted by name.
func (r *Registry) Entries() []*Entry {
	r.mu.RLock()
	out := make([]*Entry, 0, len(r.byName))
	for _, reg := range r.byName {
		out = append(out, reg)
	}
	r.mu.RUnlock()
	slices.SortFunc(out, func(a, b *Entry) int {
		switch {
		case a.cfg.Name < b.cfg.Name:
			return -1
		case a.cfg.Name > b.cfg.Name:
			return 1
		}
		return 0
	})
	return out
}
