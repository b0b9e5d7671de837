package export

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/pin-tool/pin/internal/atomicfile"
	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/compose"
	"github.com/pin-tool/pin/internal/helmvalues"
	"github.com/pin-tool/pin/internal/imageref"
	"github.com/pin-tool/pin/internal/order"
	"github.com/pin-tool/pin/resolve"
)

// Request is what one export reads: the exports, the Compose projects of
// Exports.Compose (loaded by the caller, which says what Compose warns
// about), in the same order, and the folder the paths of Exports are
// relative to ("": as written).
type Request struct {
	Exports  catalogue.Export
	Projects []*compose.Project
	Root     string
	// Charts are Helm chart folders whose values files (the chart's and
	// its unpacked subcharts') get the lock (see Helm).
	Charts []string
}

// Options say how Run writes.
type Options struct {
	// Check writes nothing: the report says what disagrees.
	Check bool
	// Force replaces an override file pin did not write.
	Force bool
}

// Report is what Run did, or would do.
type Report struct {
	// Result holds every file once, in the order first met.
	Result
	// Unsafe are the cutovers the floor guarantee refuses, host by host
	// (sorted) in the order resolve.PlanCutover gives them; when there are
	// any, nothing was checked or written.
	Unsafe []resolve.Cutover
	// Downgrades are the references a write would make name an older or
	// unorderable image than the file names now; when there are any,
	// nothing was checked or written.
	Downgrades []Downgrade
	// Refused are the files the writer would refuse (not pin's, changed
	// meanwhile, a dangling link), each explained; with them, nothing is
	// written.
	Refused []error
	// Written: the changed files were written.
	Written bool
}

// InputError is an export whose input is at fault: a file that cannot
// be read or written, or that export cannot make sense of. What names the
// export it was for ("compose export").
type InputError struct {
	What string
	Err  error
}

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// HostError is a host the exported modules run on that could not be
// read: its floors are not known.
type HostError struct {
	Host string
	Err  error
}

func (e *HostError) Error() string { return fmt.Sprintf("host %s: %v", e.Host, e.Err) }
func (e *HostError) Unwrap() error { return e.Err }

// GateError is a cutover that could not be previewed on Host (a registry
// that failed, a lock entry that disagrees with its content).
type GateError struct {
	Host string
	Err  error
}

func (e *GateError) Error() string { return e.Err.Error() }
func (e *GateError) Unwrap() error { return e.Err }

// Run is an export: it reads the files r names and works out what each
// should hold for the lock in.Old; previews, as pin plan does, the
// cutover of every module it writes on every host that module runs on,
// and refuses (Report.Unsafe, nothing written) a downgrade or an unknown
// order; checks every write before it makes any, so that a refusal writes
// none; and, unless o.Check, writes the files that change. The report is
// nil when the files could not be read or the gate could not run; it is
// not once the gate has judged.
func Run(ctx context.Context, in resolve.Input, r Request, o Options) (*Report, error) {
	res, err := Read(r, NewCoverage(in.Catalogue, in.Old))
	if err != nil {
		return nil, err
	}
	written := map[string]bool{}
	for _, e := range res.Entries {
		written[e.Module] = true
	}
	rep := &Report{Result: res}
	if rep.Downgrades, err = Downgrades(ctx, in, res.Entries); err != nil {
		return nil, err
	}
	if len(rep.Downgrades) > 0 {
		return rep, nil
	}
	cuts, err := Gate(ctx, in, Hosts(in.Catalogue, written), written)
	if err != nil {
		return nil, err
	}
	for _, c := range cuts {
		if !c.Safe() {
			rep.Unsafe = append(rep.Unsafe, c)
		}
	}
	if len(rep.Unsafe) > 0 {
		return rep, nil
	}
	for _, f := range rep.Files {
		if f.Changed() {
			if _, err := atomicfile.Check(f.Path, f.Bytes, f.WriteOptions(o.Force)); err != nil {
				rep.Refused = append(rep.Refused, Explain(err))
			}
		}
	}
	if o.Check {
		return rep, nil
	}
	if len(rep.Refused) > 0 {
		return rep, &InputError{What: "export", Err: fmt.Errorf("%w; nothing written", errors.Join(rep.Refused...))}
	}
	for _, f := range rep.Files {
		if f.Changed() {
			if _, err := atomicfile.Write(f.Path, f.Bytes, f.WriteOptions(o.Force)); err != nil {
				return rep, &InputError{What: "export", Err: Explain(err)}
			}
		}
	}
	rep.Written = true
	return rep, nil
}

// Downgrade is a reference export refuses to write over: the lock entry
// of Module (Locked) is older than the image the file names there
// (Named, at At), or cannot be ordered against it; Order says by which
// rule, and how.
type Downgrade struct {
	At, Module    string
	Named, Locked string
	Order         order.Result
}

// String is the refusal as pin prints it: where, the module, both images,
// the rule, and what to do.
func (d Downgrade) String() string {
	word := "not known to be newer"
	if d.Order.Cmp == order.Older {
		word = "older"
	}
	return fmt.Sprintf("%s: refused: module %s's lock names %s, %s than the %s written here (%s: %s); pin never makes a file name an older image than it named: run pin resolve, or write the older image in the file yourself",
		d.At, d.Module, d.Locked, word, d.Named, d.Order.Rule, d.Order.Detail)
}

// Downgrades judges each entry that would change what a file names
// (resolve.JudgeWritten): no write makes a deploy file name an older or
// unorderable image than it named. A registry that fails is a
// *GateError.
func Downgrades(ctx context.Context, in resolve.Input, entries []Entry) ([]Downgrade, error) {
	var out []Downgrade
	for _, e := range entries {
		m := in.Catalogue.Module(e.Module)
		if m == nil {
			continue
		}
		for _, n := range e.Named {
			if n.Ref == "" || n.Ref == e.New {
				continue
			}
			res, err := resolve.JudgeWritten(ctx, in, m, n.Ref)
			if err != nil {
				return nil, &GateError{Err: fmt.Errorf("%s: ordering %s against the lock: %w", n.At, n.Ref, err)}
			}
			if res.Cmp != order.Newer && res.Cmp != order.Equal {
				out = append(out, Downgrade{At: n.At, Module: e.Module, Named: n.Ref, Locked: e.New, Order: res})
			}
		}
	}
	return out, nil
}

// Explain adds to a write the writer refused what to do about it: an
// override is replaced only over pin's own (or with --force), a file
// export edits only while it holds what was read.
func Explain(err error) error {
	switch {
	case errors.Is(err, atomicfile.ErrNotOwned):
		return fmt.Errorf("%w: it lacks the header pin writes, so a person wrote it; pass --force to replace it, or move it away", err)
	case errors.Is(err, atomicfile.ErrChanged):
		return fmt.Errorf("%w: it changed while pin export ran; run pin export again", err)
	case errors.Is(err, atomicfile.ErrDanglingLink):
		return fmt.Errorf("%w: create the file it names, or remove the link", err)
	}
	return fmt.Errorf("writing %w", err)
}

// Hosts are the hosts that modules run on (runs_on), sorted.
func Hosts(cat *catalogue.Catalogue, modules map[string]bool) []string {
	var hosts []string
	for _, m := range cat.Modules {
		if !modules[m.Name] {
			continue
		}
		for _, ro := range m.RunsOn {
			hosts = append(hosts, ro.Host)
		}
	}
	slices.Sort(hosts)
	return slices.Compact(hosts)
}

// Gate is the floor guarantee: it previews the cutover of in.Old on each
// of hosts (resolve.PlanCutover, as pin plan does) and returns the
// cutovers of the modules in check, host by host. A host in
// in.Observed.Errors is a *HostError (its floors are not known); a cutover
// that cannot be previewed a *GateError.
func Gate(ctx context.Context, in resolve.Input, hosts []string, check map[string]bool) ([]resolve.Cutover, error) {
	var out []resolve.Cutover
	in.Record.Only = nil
	for _, h := range hosts {
		if err, ok := in.Observed.Errors[h]; ok {
			return nil, &HostError{Host: h, Err: err}
		}
		in.Record.Host = h
		cuts, err := resolve.PlanCutover(ctx, in)
		if err != nil {
			return nil, &GateError{Host: h, Err: err}
		}
		for _, c := range cuts {
			if check[c.Module] {
				out = append(out, c)
			}
		}
	}
	return out, nil
}

// Read reads the files r names and returns what each should hold for the
// lock of cov, the results of every export merged, each file once (the
// first time it is met). Read writes nothing.
func Read(r Request, cov *Coverage) (Result, error) {
	in := func(p string) string {
		if r.Root == "" {
			return p
		}
		return filepath.Join(r.Root, p)
	}
	var results []Result
	for i, c := range r.Exports.Compose {
		p := r.Projects[i]
		if c.InPlace {
			srcs, err := readFiles(p.Files)
			if err != nil {
				return Result{}, err
			}
			res, err := InPlace(p, cov, srcs)
			if err != nil {
				return Result{}, &InputError{What: "compose export", Err: err}
			}
			results = append(results, res)
			continue
		}
		old, err := readIfExists(OverridePath(p.Files[0]))
		if err != nil {
			return Result{}, err
		}
		results = append(results, Override(p, cov, old))
	}
	for _, dir := range r.Exports.Manifests {
		files, err := imageref.ManifestFiles(in(dir))
		if err != nil {
			return Result{}, &InputError{What: "reading manifests", Err: err}
		}
		srcs, err := readFiles(files)
		if err != nil {
			return Result{}, err
		}
		res, err := Manifests(cov, files, srcs)
		if err != nil {
			return Result{}, &InputError{What: "manifests export", Err: err}
		}
		results = append(results, res)
	}
	for _, dir := range r.Exports.Kustomize {
		refs, _, err := imageref.ReadManifests(in(dir))
		if err != nil {
			return Result{}, &InputError{What: "kustomize export", Err: err}
		}
		path := filepath.Join(in(dir), "kustomization.yaml")
		old, err := os.ReadFile(path)
		if err != nil {
			return Result{}, &InputError{What: "kustomize export", Err: fmt.Errorf("reading the kustomization: %w", err)}
		}
		res, err := Kustomize(path, cov, refs, old)
		if err != nil {
			return Result{}, &InputError{What: "kustomize export", Err: err}
		}
		results = append(results, res)
	}
	for _, dir := range r.Charts {
		c, err := helmvalues.Read(in(dir))
		if err != nil {
			return Result{}, &InputError{What: "helm export", Err: err}
		}
		res, err := Helm(cov, c)
		if err != nil {
			return Result{}, &InputError{What: "helm export", Err: err}
		}
		results = append(results, res)
	}
	for _, f := range r.Exports.Env {
		old, err := readIfExists(in(f))
		if err != nil {
			return Result{}, err
		}
		results = append(results, Env(in(f), cov, old))
	}
	return merge(results), nil
}

// merge is every result in one, each file once.
func merge(results []Result) Result {
	var m Result
	seen := map[string]bool{}
	for _, r := range results {
		m.Entries = append(m.Entries, r.Entries...)
		m.Skipped = append(m.Skipped, r.Skipped...)
		m.Findings = append(m.Findings, r.Findings...)
		for _, f := range r.Files {
			if !seen[f.Path] {
				seen[f.Path] = true
				m.Files = append(m.Files, f)
			}
		}
	}
	return m
}

// readFiles reads each of paths, by path.
func readFiles(paths []string) (map[string][]byte, error) {
	srcs := make(map[string][]byte, len(paths))
	for _, f := range paths {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, &InputError{What: "export", Err: err}
		}
		srcs[f] = b
	}
	return srcs, nil
}

// readIfExists reads path; nil when there is no file.
func readIfExists(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, &InputError{What: "export", Err: err}
	}
	return b, nil
}
