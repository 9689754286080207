package runtime

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
// resolved to code. A Registry is safe for concurrent use.
type Registry struct {
	mu     sync.RWMutex
	byName map[string]*registered
	byType map[reflect.Type]*registered
}

// registered is one validated TaskConfig with its parsed schedule.
type registered struct {
	cfg      TaskConfig
	typ      reflect.Type // the dereferenced type New returns
	loc      *time.Location
	schedule Schedule // nil for job types
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{
		byName: make(map[string]*registered),
		byType: make(map[reflect.Type]*registered),
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
	if _, dup := r.byName[reg.cfg.Name]; dup {
		return fmt.Errorf("task %q: registered twice", reg.cfg.Name)
	}
	if other, dup := r.byType[reg.typ]; dup {
		return fmt.Errorf("task %q: type %v is already registered as %q", reg.cfg.Name, reg.typ, other.cfg.Name)
	}
	r.byName[reg.cfg.Name] = reg
	r.byType[reg.typ] = reg
	return nil
}

// compile validates cfg and parses its zone and schedule.
func compile(cfg TaskConfig) (*registered, error) {
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
	reg := &registered{cfg: cfg, typ: typ, loc: loc}
	if cfg.Expression != "" {
		reg.schedule, err = schedule.Parse(cfg.Expression, loc)
		if err != nil {
			return nil, fmt.Errorf("task %q: expression %q: %w", cfg.Name, cfg.Expression, err)
		}
	}
	return reg, nil
}

// Lookup returns the config registered under name, with defaults applied.
func (r *Registry) Lookup(name string) (TaskConfig, bool) {
	reg := r.lookup(name)
	if reg == nil {
		return TaskConfig{}, false
	}
	return reg.cfg, true
}

func (r *Registry) lookup(name string) *registered {
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

func (r *Registry) lookupValue(job TaskInterface) *registered {
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
	regs := r.all()
	out := make([]TaskConfig, len(regs))
	for i, reg := range regs {
		out[i] = reg.cfg
	}
	return out
}

func (r *Registry) all() []*registered {
	r.mu.RLock()
	out := make([]*registered, 0, len(r.byName))
	for _, reg := range r.byName {
		out = append(out, reg)
	}
	r.mu.RUnlock()
	slices.SortFunc(out, func(a, b *registered) int {
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
