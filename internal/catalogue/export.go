package catalogue

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

var (
	exportSchema = &hcl.BodySchema{
		Attributes: []hcl.AttributeSchema{{Name: "manifests"}, {Name: "kustomize"}, {Name: "env"}},
		Blocks:     []hcl.BlockHeaderSchema{{Type: "compose"}},
	}
	exportComposeSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
		{Name: "files"}, {Name: "project_name"}, {Name: "profiles"}, {Name: "in_place"},
	}}
)

// Export is the catalogue's export block: the files a repository keeps in
// step with its lock, which pin export writes and pin propose commits
// when no command-line flag names any. Paths are as pin opens them:
// relative ones joined to the folder of the catalogue file that declares
// them.
//
// The same type carries the exports a command line names (Override), so
// its ranges are only known for the block's own paths.
type Export struct {
	// Compose are Compose projects, each written as an override beside
	// its first file (compose.yaml → compose.pin.yaml), or with InPlace
	// in its files' image: values.
	Compose []ComposeExport
	// Manifests are files or folders of Kubernetes manifests, rewritten
	// in place.
	Manifests []string
	// Kustomize are folders whose kustomization.yaml gets images: entries.
	Kustomize []string
	// Env are env files of NAME_IMAGE= lines (created when missing).
	Env       []string
	DeclRange hcl.Range
	// paths are where each path is written, for Check.
	paths []exportPath
}

// ComposeExport is one Compose project to export to.
type ComposeExport struct {
	// Files are merged in order, as Compose merges them.
	Files []string
	// ProjectName is the project's name ("": as Compose names it).
	ProjectName string
	// Profiles are the active profiles; nil means COMPOSE_PROFILES.
	Profiles []string
	// InPlace rewrites the files' image: values instead of writing the
	// override.
	InPlace bool
}

// exportPath is a path of the block: what it names, and where.
type exportPath struct {
	kind, path string
	rng        hcl.Range
}

// Names reports whether e names any file to write.
func (e Export) Names() bool {
	for _, c := range e.Compose {
		if len(c.Files) > 0 {
			return true
		}
	}
	return len(e.Manifests) > 0 || len(e.Kustomize) > 0 || len(e.Env) > 0
}

// ErrExportSetting is a command-line Compose setting (project name,
// profiles, in place) that the export block gives no single project to.
var ErrExportSetting = errors.New("no Compose project to apply the setting to")

// Override is what a command writes, given the exports its flags name
// (cmd) and the catalogue's block (e, nil when it has none). When cmd
// names a file, cmd is written and the block is not read at all: the
// command line says where to write, as Compose's -f replaces
// compose.yaml. Otherwise the block's exports are written, and the
// Compose settings cmd sets (a project name, profiles, in place: those of
// its first Compose project) replace the block's, as Compose's -p
// replaces name:. A setting with no Compose project to go to (or a
// project name for several, or a project name or profiles beside files
// that name no Compose file) is an ErrExportSetting.
func (e *Export) Override(cmd Export) (Export, error) {
	if cmd.Names() {
		for _, c := range cmd.Compose {
			if len(c.Files) == 0 && (c.ProjectName != "" || c.Profiles != nil) {
				return Export{}, fmt.Errorf("%w: the command line names files to export to, but no Compose file", ErrExportSetting)
			}
		}
		out := cmd
		out.Compose = slices.DeleteFunc(slices.Clone(cmd.Compose), func(c ComposeExport) bool { return len(c.Files) == 0 })
		out.paths = nil
		return out, nil
	}
	var out Export
	if e != nil {
		out = *e
		out.Compose = slices.Clone(e.Compose)
	}
	if len(cmd.Compose) == 0 {
		return out, nil
	}
	set := cmd.Compose[0]
	var given []string
	if set.ProjectName != "" {
		given = append(given, "project_name")
	}
	if set.Profiles != nil {
		given = append(given, "profiles")
	}
	if set.InPlace {
		given = append(given, "in_place")
	}
	if len(given) == 0 {
		return out, nil
	}
	switch {
	case len(out.Compose) == 0 && e == nil:
		return out, fmt.Errorf("%w: the catalogue has no export block, and no Compose file is named", ErrExportSetting)
	case len(out.Compose) == 0:
		return out, fmt.Errorf("%w: the catalogue's export block at %s has no compose block", ErrExportSetting, e.DeclRange)
	case set.ProjectName != "" && len(out.Compose) > 1:
		return out, fmt.Errorf("%w: one project name for the %d compose blocks of the export block at %s; write project_name in each", ErrExportSetting, len(out.Compose), e.DeclRange)
	}
	for i := range out.Compose {
		c := &out.Compose[i]
		if set.ProjectName != "" {
			c.ProjectName = set.ProjectName
		}
		if set.Profiles != nil {
			c.Profiles = set.Profiles
		}
		if set.InPlace {
			c.InPlace = true
		}
	}
	return out, nil
}

// Check reports, as diagnostics at the block's lines, the paths of the
// block that are not there to write: a Compose file or a manifest path
// that does not exist, a kustomize folder without kustomization.yaml, an
// env file whose folder does not exist (the file itself is created).
//
// It is a check of the export, not of the catalogue: a catalogue loads
// where its exports are absent (pin admit in a cluster, pin resolve in CI
// before a checkout of the deploy files), so Load does not stat them.
func (e *Export) Check() hcl.Diagnostics {
	if e == nil {
		return nil
	}
	var diags hcl.Diagnostics
	for _, p := range e.paths {
		var missing, what string
		switch p.kind {
		case "files":
			what = "Compose file"
			if fi, err := os.Stat(p.path); err != nil || fi.IsDir() {
				missing = p.path
			}
		case "manifests":
			what = "manifests path"
			if _, err := os.Stat(p.path); err != nil {
				missing = p.path
			}
		case "kustomize":
			what = "kustomize folder"
			if _, err := os.Stat(filepath.Join(p.path, "kustomization.yaml")); err != nil {
				missing = filepath.Join(p.path, "kustomization.yaml")
			}
		case "env":
			what = "env file's folder"
			if fi, err := os.Stat(filepath.Dir(p.path)); err != nil || !fi.IsDir() {
				missing = filepath.Dir(p.path)
			}
		}
		if missing != "" {
			diags = append(diags, errorf(p.rng, "Export path not found", "The %s %s does not exist. Create it, or fix the path: paths in the export block are relative to the folder of the catalogue file (%s).", what, missing, filepath.Dir(p.rng.Filename)))
		}
	}
	return diags
}

// exportWords is what the export block takes, for messages.
const exportWords = `compose { files = ["compose.yaml"] }, manifests = ["deploy/"], kustomize = ["overlays/prod"] and env = ["deploy.env"]`

const composeWords = `files = ["compose.yaml"] (required), project_name = "stack", profiles = ["build"] and in_place = true`

func (l *loader) export(b *hcl.Block, dir string) hcl.Diagnostics {
	content, diags := b.Body.Content(exportSchema)
	diags = explainUnsupported(diags, "The export block takes "+exportWords+".")
	e := &Export{DeclRange: b.DefRange}
	if prev := l.c.Export; prev != nil {
		diags = append(diags, errorf(b.DefRange, "Duplicate export block", "The catalogue has an export block already, at %s. Merge the two: one block declares every file that pin export and pin propose write.", prev.DeclRange))
	} else {
		l.c.Export = e
	}
	overrides := map[string]hcl.Range{}
	for _, cb := range content.Blocks {
		c, d := e.compose(cb, dir)
		diags = append(diags, d...)
		if len(c.Files) == 0 {
			continue
		}
		o := filepath.Clean(c.Files[0])
		if prev, ok := overrides[o]; ok {
			diags = append(diags, errorf(cb.DefRange, "Duplicate compose project", "This compose block's first file is %s, as that of the compose block at %s: both would write the same override. Merge the two blocks, or list the files of one project in one block.", c.Files[0], prev))
			continue
		}
		overrides[o] = cb.DefRange
		e.Compose = append(e.Compose, c)
	}
	a := content.Attributes
	for _, f := range []struct {
		name, example string
		dst           *[]string
	}{
		{"manifests", `manifests = ["deploy/"]`, &e.Manifests},
		{"kustomize", `kustomize = ["overlays/prod"]`, &e.Kustomize},
		{"env", `env = ["deploy.env"]`, &e.Env},
	} {
		d := e.pathList(a[f.name], dir, f.example, f.dst)
		diags = append(diags, d...)
	}
	return diags
}

// compose reads a compose block of the export block.
func (e *Export) compose(b *hcl.Block, dir string) (ComposeExport, hcl.Diagnostics) {
	var c ComposeExport
	content, diags := b.Body.Content(exportComposeSchema)
	diags = explainUnsupported(diags, "A compose block takes "+composeWords+".")
	a := content.Attributes
	if a["files"] == nil {
		diags = append(diags, errorf(b.DefRange, "Missing Compose files", "A compose block names its Compose files: write files = [\"compose.yaml\"] (several are merged in order, as docker compose -f merges them)."))
	}
	d := e.pathList(a["files"], dir, `files = ["compose.yaml", "compose.prod.yaml"]`, &c.Files)
	diags = append(diags, d...)
	if attr := a["files"]; attr != nil && len(c.Files) == 0 && len(d) == 0 {
		diags = append(diags, errorf(attr.Expr.Range(), "Missing Compose files", "files is empty. Name the Compose files: files = [\"compose.yaml\"], or drop the compose block."))
	}
	if attr := a["project_name"]; attr != nil {
		d := typed(attr, cty.String, `project_name = "stack"`, func(v cty.Value) { c.ProjectName = v.AsString() })
		diags = append(diags, d...)
		if strings.TrimSpace(c.ProjectName) == "" && len(d) == 0 {
			diags = append(diags, errorf(attr.Expr.Range(), "Empty project name", "project_name is empty. Write the project's name, as docker compose -p takes it, or drop project_name to let Compose name it."))
		}
	}
	if attr := a["profiles"]; attr != nil {
		diags = append(diags, typed(attr, cty.List(cty.String), `profiles = ["build"]`, func(v cty.Value) {
			c.Profiles = []string{} // set: none, rather than COMPOSE_PROFILES
			for _, p := range v.AsValueSlice() {
				c.Profiles = append(c.Profiles, p.AsString())
			}
		})...)
	}
	if attr := a["in_place"]; attr != nil {
		diags = append(diags, typed(attr, cty.Bool, `in_place = true`, func(v cty.Value) { c.InPlace = v.True() })...)
	}
	return c, diags
}

// pathList reads a list of paths into dst, each joined to dir, and
// records where each is written.
func (e *Export) pathList(a *hcl.Attribute, dir, example string, dst *[]string) hcl.Diagnostics {
	if a == nil {
		return nil
	}
	var vals []cty.Value
	diags := typed(a, cty.List(cty.String), example, func(v cty.Value) { vals = v.AsValueSlice() })
	if diags.HasErrors() {
		return diags
	}
	// Each element's own range, when the list is written out.
	elems, d := hcl.ExprList(a.Expr)
	if d.HasErrors() || len(elems) != len(vals) {
		elems = nil
	}
	seen := map[string]hcl.Range{}
	for i, v := range vals {
		rng := a.Expr.Range()
		if elems != nil {
			rng = elems[i].Range()
		}
		p := v.AsString()
		if strings.TrimSpace(p) == "" {
			diags = append(diags, errorf(rng, "Empty path", "%s lists an empty path. Write a path relative to the catalogue file's folder, such as %s.", a.Name, example))
			continue
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if prev, ok := seen[filepath.Clean(p)]; ok {
			diags = append(diags, errorf(rng, "Duplicate path", "%s lists %q twice (first at %s). List each path once.", a.Name, v.AsString(), prev))
			continue
		}
		seen[filepath.Clean(p)] = rng
		*dst = append(*dst, p)
		e.paths = append(e.paths, exportPath{kind: a.Name, path: p, rng: rng})
	}
	return diags
}

// typed converts a's value to ty and hands it to set; a value of another
// type is an error that shows what to write.
func typed(a *hcl.Attribute, ty cty.Type, example string, set func(cty.Value)) hcl.Diagnostics {
	v, diags := a.Expr.Value(nil)
	if diags.HasErrors() {
		return diags
	}
	cv, err := convert.Convert(v, ty)
	if err != nil || cv.IsNull() || !cv.IsWhollyKnown() || ty.IsListType() && hasNull(cv) {
		return hcl.Diagnostics{errorf(a.Expr.Range(), "Invalid value", "%s must be %s. Write it as a literal, such as %s.", a.Name, friendly(ty), example)}
	}
	set(cv)
	return nil
}

func hasNull(list cty.Value) bool {
	for _, e := range list.AsValueSlice() {
		if e.IsNull() {
			return true
		}
	}
	return false
}

func friendly(ty cty.Type) string {
	switch {
	case ty == cty.Bool:
		return "true or false"
	case ty.IsListType():
		return "a list of strings"
	}
	return "a string"
}

// explainUnsupported adds to HCL's diagnostics for an argument or block
// the schema does not know what the block takes.
func explainUnsupported(diags hcl.Diagnostics, takes string) hcl.Diagnostics {
	for _, d := range diags {
		switch d.Summary {
		case "Unsupported argument", "Unsupported block type", "Missing required argument", "Extraneous label for compose":
			d.Detail = strings.TrimSpace(d.Detail + " " + takes)
		}
	}
	return diags
}
