package compose

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/template"
	"github.com/compose-spec/compose-go/v2/types"
	"github.com/google/go-containerregistry/pkg/name"

	"github.com/pin-tool/pin/internal/imageref"
)

// Options say which project to read.
type Options struct {
	// Files are the Compose files, merged in order (later ones override).
	Files []string
	// Profiles are the active profiles; nil means COMPOSE_PROFILES.
	Profiles []string
	// ProjectName overrides the project's name (Compose's -p).
	ProjectName string
	// Env is the environment ("K=V"); nil means the process's. The .env
	// file of the first file's folder adds to it, as in Compose.
	Env []string
}

// Project is a loaded Compose project.
type Project struct {
	Name string
	// Files are the files read, as given.
	Files []string
	// Services are the enabled services, sorted by name; Disabled those
	// whose profiles are not active.
	Services, Disabled []Service
	// Warnings are what compose-go warned about while reading the files
	// (as Compose prints them: an obsolete "version" attribute, say).
	Warnings []string
}

// Service is one Compose service.
type Service struct {
	Name string
	// Image is the image reference after interpolation; "" for a service
	// that is only built.
	Image string
	// Build reports a build section.
	Build    bool
	Profiles []string
	// Ref is where the image was set: the last file to set it (Compose
	// merges later files over earlier ones). Ref.Raw is the text there,
	// variables included. Zero when no file sets it directly (extends,
	// include).
	Ref imageref.Ref
}

// Interpolated reports whether the image as written holds a variable.
func (s Service) Interpolated() bool { return strings.Contains(s.Ref.Value, "$") }

// Error is bad input, with the file and line it is on (Line 0 when
// unknown).
type Error struct {
	File string
	Line int
	Err  error
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
	}
	if e.File != "" {
		return fmt.Sprintf("%s: %v", e.File, e.Err)
	}
	return e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// ErrBadInput is wrapped by every error that is the files' fault.
var ErrBadInput = errors.New("bad compose file")

// missingVar is a variable with no value and no default.
type missingVar struct{ name string }

func (e *missingVar) Error() string { return "variable " + e.name + " is not set" }

// Load reads a Compose project. Errors in the files are *Error values
// wrapping ErrBadInput.
func Load(ctx context.Context, o Options) (*Project, error) {
	if len(o.Files) == 0 {
		return nil, errors.New("no compose file given")
	}
	logMu.Lock()
	defer logMu.Unlock()
	warned, restore := collectWarnings()
	defer restore()
	refs := map[string][]imageref.Ref{}
	srcs := map[string][]byte{}
	for _, f := range o.Files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("reading compose file: %w", err)
		}
		r, err := imageref.ComposeRefs(f, b)
		if err != nil {
			var se *imageref.SyntaxError
			if errors.As(err, &se) {
				return nil, &Error{File: f, Line: se.Line, Err: fmt.Errorf("%w: not valid YAML: %s", ErrBadInput, se.Msg)}
			}
			return nil, err
		}
		refs[f], srcs[f] = r, b
	}
	env := o.Env
	if env == nil {
		env = os.Environ()
	}
	var missing []string
	subst := func(s string, m template.Mapping) (string, error) {
		return template.SubstituteWithOptions(s, m, template.WithoutLogging,
			template.WithReplacementFunction(func(sub string, m template.Mapping, cfg *template.Config) (string, error) {
				v, applied, err := template.DefaultReplacementAppliedFunc(sub, m, cfg)
				if err == nil && !applied {
					n := varName(sub)
					missing = append(missing, n)
					return "", &missingVar{n}
				}
				return v, err
			}))
	}
	opts := []cli.ProjectOptionsFn{
		cli.WithWorkingDirectory(filepath.Dir(o.Files[0])),
		cli.WithEnv(env),
		cli.WithEnvFiles(),
		cli.WithDotEnv,
		cli.WithInterpolation(true),
		cli.WithLoadOptions(func(lo *loader.Options) {
			lo.SkipConsistencyCheck = true
			if lo.Interpolate != nil {
				lo.Interpolate.Substitute = subst
			}
		}),
	}
	if o.ProjectName != "" {
		opts = append(opts, cli.WithName(o.ProjectName))
	}
	if o.Profiles != nil {
		opts = append(opts, cli.WithProfiles(o.Profiles))
	} else {
		opts = append(opts, cli.WithDefaultProfiles())
	}
	po, err := cli.NewProjectOptions(o.Files, opts...)
	if err != nil {
		return nil, quiet(err, o.Files, srcs)
	}
	p, err := po.LoadProject(ctx)
	if err != nil {
		if len(missing) > 0 {
			file, line := findVar(o.Files, srcs, missing[0])
			return nil, &Error{File: file, Line: line, Err: fmt.Errorf("%w: variable %s has no value and no default: set it in the environment or .env, or write ${%s:-<default>}", ErrBadInput, missing[0], missing[0])}
		}
		e := quiet(err, o.Files, srcs)
		if e.File == "" {
			e.File = strings.Join(o.Files, ",")
		}
		return nil, e
	}
	out := &Project{Name: p.Name, Files: o.Files}
	for _, w := range warned.msgs {
		out.Warnings = append(out.Warnings, quietText(w, srcs))
	}
	where := func(svc string) imageref.Ref {
		var last imageref.Ref
		for _, f := range o.Files {
			for _, r := range refs[f] {
				if r.Service == svc {
					last = r
				}
			}
		}
		return last
	}
	conv := func(s types.ServiceConfig) (Service, error) {
		svc := Service{Name: s.Name, Image: s.Image, Build: s.Build != nil, Profiles: s.Profiles, Ref: where(s.Name)}
		if svc.Image != "" {
			if _, err := name.ParseReference(svc.Image); err != nil {
				// The image as written: after interpolation it may hold
				// the environment's or .env's values.
				if svc.Interpolated() || !inSources(svc.Image, srcs) {
					return svc, &Error{File: svc.Ref.File, Line: svc.Ref.Line, Err: fmt.Errorf("%w: service %s: image %q is not a valid reference once read "+
						"(its value is not shown: it comes from the environment, .env or a file the Compose file includes; docker compose config --images prints it): write repository:tag", ErrBadInput, s.Name, svc.Ref.Value)}
				}
				return svc, &Error{File: svc.Ref.File, Line: svc.Ref.Line, Err: fmt.Errorf("%w: service %s: image %q is not a valid reference: %v; write repository:tag",
					ErrBadInput, s.Name, svc.Image, err)}
			}
		}
		return svc, nil
	}
	for _, s := range p.Services {
		svc, err := conv(s)
		if err != nil {
			return nil, err
		}
		out.Services = append(out.Services, svc)
	}
	for _, s := range p.DisabledServices {
		svc, err := conv(s)
		if err != nil {
			return nil, err
		}
		out.Disabled = append(out.Disabled, svc)
	}
	byName := func(a, b Service) int { return strings.Compare(a.Name, b.Name) }
	slices.SortFunc(out.Services, byName)
	slices.SortFunc(out.Disabled, byName)
	return out, nil
}

var varRe = regexp.MustCompile(`^\$\{?([A-Za-z_][A-Za-z0-9_]*)`)

func varName(sub string) string {
	if m := varRe.FindStringSubmatch(sub); m != nil {
		return m[1]
	}
	return sub
}

// findVar finds the first use of variable n in the files, for the line of
// an error.
func findVar(files []string, srcs map[string][]byte, n string) (string, int) {
	re := regexp.MustCompile(`\$\{?` + regexp.QuoteMeta(n) + `\b`)
	for _, f := range files {
		for i, l := range strings.Split(string(srcs[f]), "\n") {
			if re.MatchString(l) {
				return f, i + 1
			}
		}
	}
	return files[0], 0
}
