package runtime

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/gocrontab/crontab/runtime/registry"
)

// Provide gives the scheduler values of registered task or job types whose
// fields hold dependencies, such as a database handle, a client or a
// logger; Scheduler. Each run of such a type (a scheduled fire, a run-time
// task, a job) gets a pointer to its own shallow copy of the value instead
// of New's zero value, and a run-time task's parameters or a job's payload
// are decoded into that copy: tag the dependency fields `json:"-"` so the
// decoding leaves them alone. A value may be given as T or as *T (a
// pointer receiver of Handle needs *T); it is copied by NewScheduler, so a
// later change to it is not seen. Types not provided get New's value.
//
// The copy is shallow: a handler that sets a field changes its own copy
// only, but what maps, slices, pointers and interfaces in the fields refer
// to is shared by every run, and runs may overlap, so it must be safe for
// concurrent use.
//
// None by default. A nil value, a type that is not registered and a type
// given twice (in one call or across calls) are errors from NewScheduler;
// a registered type that WithTasks leaves out of this process is accepted
// and unused.
//
//	type Report struct {
//		Store *Store `json:"-"`   // a dependency
//		Day   string `json:"day"` // the payload
//	}
//	s, err := tasks.NewScheduler(rdb, crontab.Provide(tasks.Report{Store: store}))
func Provide(values ...TaskInterface) Option {
	return func(o *options) {
		for i, v := range values {
			switch {
			case v == nil:
				o.use("Provide", scopeScheduler, "value %d is nil", i)
				return
			case isNil(v):
				o.use("Provide", scopeScheduler, "value %d is a nil %T", i, v)
				return
			}
		}
		o.use("Provide", scopeScheduler, "")
		o.provide = append(o.provide, values...)
	}
}

// isNil reports whether v is nil or holds a nil pointer.
func isNil(v TaskInterface) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}

// providedValue builds the handler values of one provided type.
type providedValue struct {
	typ reflect.Type  // the registered type, T
	val reflect.Value // the copy of the provided value, of type T
}

// new returns a pointer to a fresh shallow copy of the provided value.
func (p *providedValue) new() TaskInterface {
	v := reflect.New(p.typ)
	v.Elem().Set(p.val)
	return v.Interface().(TaskInterface)
}

// resolveProvided checks the values given to Provide against reg, the
// full registry given to NewScheduler, and returns the handler value
// builders by task name: one look-up per run, none by reflect.Type.
func resolveProvided(reg *Registry, values []TaskInterface) (map[string]*providedValue, error) {
	if len(values) == 0 {
		return nil, nil
	}
	out := make(map[string]*providedValue, len(values))
	var errs []error
	for _, v := range values {
		given := reflect.TypeOf(v)
		name, ok := reg.NameOf(v)
		if !ok {
			errs = append(errs, fmt.Errorf("crontab: Provide: type %v is not registered: give it a //crontab: directive and run go generate, or add a TaskConfig for it with Registry.Add", given))
			continue
		}
		if _, dup := out[name]; dup {
			errs = append(errs, fmt.Errorf("crontab: Provide: type %v (task %q) is given twice", given, name))
			continue
		}
		rv := reflect.ValueOf(v)
		if rv.Kind() == reflect.Pointer {
			rv = rv.Elem()
		}
		p := &providedValue{typ: rv.Type(), val: reflect.New(rv.Type()).Elem()}
		p.val.Set(rv) // the copy taken now: later changes to v are not seen
		if !reflect.PointerTo(p.typ).Implements(taskInterfaceType) {
			errs = append(errs, fmt.Errorf("crontab: Provide: type %v (task %q): *%v does not implement TaskInterface", given, name, p.typ))
			continue
		}
		out[name] = p
	}
	return out, errors.Join(errs...)
}

var taskInterfaceType = reflect.TypeFor[TaskInterface]()

// newValue returns the handler value of a run of entry: a fresh copy of
// its provided value, or New's value when the type was not provided.
func (e *engine) newValue(entry *registry.Entry) TaskInterface {
	if p := e.provided[entry.Config().Name]; p != nil {
		return p.new()
	}
	return entry.Config().New()
}

// newFromConfig returns New's value of entry, for callers without an
// engine.
func newFromConfig(entry *registry.Entry) TaskInterface { return entry.Config().New() }
