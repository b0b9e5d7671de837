package helmvalues

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/google/go-containerregistry/pkg/name"

	"github.com/pin-tool/pin/internal/imageref"
)

// File is one values file of a chart.
type File struct {
	Path string
	Src  []byte
	// Chart is the subchart whose values these are ("" for the chart's
	// own); AppVersion that chart's appVersion.
	Chart, AppVersion string
	root              ast.Node
	markers           map[int]Marker
}

// Marker is a "# pin: MODULE [tag|digest]" comment.
type Marker struct {
	Module string
	// Part is "" (the value is a whole reference), "tag" or "digest".
	Part string
}

// Chart is a chart's values files: its own values.yaml first, then each
// unpacked subchart's, by name.
type Chart struct {
	Dir, Name, AppVersion string
	Files                 []*File
}

// Field is one scalar of a values file: where it is, for imageref.Apply.
type Field struct {
	File *File
	Ref  imageref.Ref
	// Path is its values path ("db.image.tag").
	Path string
}

// Where is the field's file:line.
func (f *Field) Where() string { return f.Ref.Where() }

// Image is one image the values name.
type Image struct {
	// Path is the values path of the image ("image", "server.image",
	// "sidecars[0].image"), from the chart's root (a subchart's under
	// its name); Where the file:line that names it.
	Path, Where string
	// Ref is the reference the chart renders: registry/repository,
	// :tag, @digest as the values give them.
	Ref string
	// Whole is set for a reference written in one string; else the map's
	// fields (nil where the map has none). Tag may be another image's
	// (TagBorrowed: read from that key); with no tag field the tag is
	// TagFrom (the chart's appVersion).
	Whole, Repository, Tag, Digest *Field
	TagBorrowed                    bool
	TagFrom                        string
	// Marker is the module a comment names for it, if any.
	Marker *Marker
}

// Arg is an image reference inside a longer string (a container argument),
// or the whole value of a key pin does not read as an image's: found,
// never written.
type Arg struct {
	Where, Path, Value, Ref string
}

// Found is what a chart's values name.
type Found struct {
	Images []Image
	Args   []Arg
}

// Read reads the chart in dir: Chart.yaml, values.yaml, and the values of
// its unpacked subcharts (charts/<name>/values.yaml). A file that is not
// YAML is an error with its line.
func Read(dir string) (*Chart, error) {
	c := &Chart{Dir: dir}
	var err error
	if c.Name, c.AppVersion, err = chartMeta(filepath.Join(dir, "Chart.yaml")); err != nil {
		return nil, err
	}
	f, err := readFile(filepath.Join(dir, "values.yaml"), "", c.AppVersion)
	if err != nil {
		return nil, err
	}
	c.Files = append(c.Files, f)
	subs, _ := filepath.Glob(filepath.Join(dir, "charts", "*", "Chart.yaml"))
	slices.Sort(subs)
	for _, s := range subs {
		sd := filepath.Dir(s)
		n, av, err := chartMeta(s)
		if err != nil {
			return nil, err
		}
		if n == "" {
			n = filepath.Base(sd)
		}
		vf := filepath.Join(sd, "values.yaml")
		if _, err := os.Stat(vf); errors.Is(err, os.ErrNotExist) {
			continue
		}
		f, err := readFile(vf, n, av)
		if err != nil {
			return nil, err
		}
		c.Files = append(c.Files, f)
	}
	return c, nil
}

func chartMeta(path string) (nm, appVersion string, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", "", fmt.Errorf("reading the chart: %w", err)
	}
	f, err := imageref.Parse(path, b)
	if err != nil {
		return "", "", err
	}
	if len(f.Docs) == 0 {
		return "", "", nil
	}
	m := mapping(f.Docs[0].Body)
	return scalarOf(lookup(m, "name")), scalarOf(lookup(m, "appVersion")), nil
}

func readFile(path, chart, appVersion string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the values: %w", err)
	}
	return ParseFile(path, b, chart, appVersion)
}

// ParseFile reads one values file's bytes (chart: the subchart it belongs
// to, "" for the chart's own).
func ParseFile(path string, src []byte, chart, appVersion string) (*File, error) {
	f, err := imageref.Parse(path, src)
	if err != nil {
		return nil, err
	}
	vf := &File{Path: path, Src: src, Chart: chart, AppVersion: appVersion, markers: markers(src)}
	if len(f.Docs) > 0 {
		vf.root = f.Docs[0].Body
	}
	return vf, nil
}

var markerRe = regexp.MustCompile(`#\s*pin:\s*([a-z0-9][a-z0-9_-]*)(?:\s+(tag|digest))?\s*$`)

// markers are the "# pin: …" comments of src by the line they mark: their
// own, or, alone on a line, the next line.
func markers(src []byte) map[int]Marker {
	out := map[int]Marker{}
	lines := bytes.Split(bytes.TrimPrefix(src, imageref.BOM), []byte("\n"))
	for i, l := range lines {
		m := markerRe.FindSubmatch(l)
		if m == nil {
			continue
		}
		mk := Marker{Module: string(m[1]), Part: string(m[2])}
		line := i + 1
		if t := bytes.TrimSpace(l); bytes.HasPrefix(t, []byte("#")) {
			line = i + 2
		}
		out[line] = mk
	}
	return out
}

// Images returns the images the chart's values name, subcharts' merged
// with the parent's keys, in file order.
func (c *Chart) Images() Found {
	var out Found
	parent := c.Files[0]
	seen := map[string]bool{}
	for _, f := range c.Files[1:] {
		f.walk(func(path []string, keyLine int, n ast.Node) {
			full := append([]string{f.Chart}, path...)
			c.image(&out, f, full, keyLine, n, func(field string) (*File, ast.Node) {
				if pn := lookupPath(parent.root, append(slices.Clone(full), field)); pn != nil {
					return parent, pn
				}
				return f, lookup(mapping(n), field)
			}, seen)
		})
	}
	parent.walk(func(path []string, keyLine int, n ast.Node) {
		if seen[strings.Join(path, ".")] {
			return // a subchart's image, read with the parent's keys
		}
		c.image(&out, parent, path, keyLine, n, func(field string) (*File, ast.Node) { return parent, lookup(mapping(n), field) }, seen)
	})
	c.borrow(&out)
	return out
}

// image adds to out what node n (at path, its key on keyLine) of f names:
// an image map, a whole reference, a marked field, or a reference inside
// a string.
func (c *Chart) image(out *Found, f *File, path []string, keyLine int, n ast.Node, field func(string) (*File, ast.Node), seen map[string]bool) {
	p := strings.Join(path, ".")
	if seen[p] {
		return
	}
	last := ""
	if len(path) > 0 {
		last = path[len(path)-1]
	}
	mk, marked := f.markers[keyLine]
	if m := mapping(n); m != nil {
		if scalarOf(lookup(m, "repository")) == "" {
			return
		}
		seen[p] = true
		img := Image{Path: p, Where: fmt.Sprintf("%s:%d", f.Path, keyLine)}
		if marked {
			img.Marker = &mk
		}
		get := func(k string) *Field {
			ff, node := field(k)
			if node == nil {
				return nil
			}
			r, ok := imageref.ValueRef(ff.Path, node)
			if !ok {
				return nil
			}
			return &Field{File: ff, Ref: r, Path: p + "." + k}
		}
		img.Repository, img.Tag, img.Digest = get("repository"), get("tag"), get("digest")
		reg := get("registry")
		repo := img.Repository.Ref.Value
		if reg != nil && reg.Ref.Value != "" {
			repo = strings.TrimSuffix(reg.Ref.Value, "/") + "/" + repo
		}
		img.Ref = repo
		if img.Tag != nil && img.Tag.Ref.Value != "" {
			img.Ref += ":" + img.Tag.Ref.Value
		} else if img.Tag == nil || img.Tag.Ref.Value == "" {
			img.TagFrom = "appVersion"
			if av := f.AppVersion; av != "" {
				img.Ref += ":" + av
			}
		}
		if img.Digest != nil && img.Digest.Ref.Value != "" {
			img.Ref += "@" + img.Digest.Ref.Value
		}
		out.Images = append(out.Images, img)
		return
	}
	r, ok := imageref.ValueRef(f.Path, n)
	if !ok || r.Value == "" {
		return
	}
	switch {
	case marked:
		seen[p] = true
		img := Image{Path: p, Where: r.Where(), Marker: &mk, Ref: r.Value}
		fl := &Field{File: f, Ref: r, Path: p}
		switch mk.Part {
		case "tag":
			img.Tag = fl
		case "digest":
			img.Digest = fl
		default:
			img.Whole = fl
		}
		out.Images = append(out.Images, img)
	case (last == "image" || strings.HasSuffix(last, "Image")) && isReference(r.Value):
		seen[p] = true
		out.Images = append(out.Images, Image{Path: p, Where: r.Where(), Ref: r.Value, Whole: &Field{File: f, Ref: r, Path: p}})
	default:
		for _, tok := range strings.FieldsFunc(r.Value, func(c rune) bool { return c == '=' || c == ' ' || c == ',' || c == '"' || c == '\'' }) {
			tagged := strings.LastIndex(tok, ":") > strings.LastIndex(tok, "/") || strings.Contains(tok, "@")
			if strings.Contains(tok, "/") && tagged && isReference(tok) {
				out.Args = append(out.Args, Arg{Where: r.Where(), Path: p, Value: r.Value, Ref: tok})
			}
		}
	}
}

// borrow gives each map without a tag the tag it reads: the chart root's
// image.tag, else global.image.tag, else the appVersion (already set).
func (c *Chart) borrow(out *Found) {
	var from *Image
	for _, key := range []string{"image", "global.image"} {
		for i := range out.Images {
			if out.Images[i].Path == key && out.Images[i].Tag != nil && out.Images[i].Tag.Ref.Value != "" {
				from = &out.Images[i]
				break
			}
		}
		if from != nil {
			break
		}
	}
	if from == nil {
		return
	}
	for i := range out.Images {
		img := &out.Images[i]
		if img.Whole != nil || img.Tag != nil || img.Marker != nil || img == from {
			continue
		}
		img.Tag, img.TagBorrowed, img.TagFrom = from.Tag, true, from.Path+".tag"
		repo, _, _ := strings.Cut(img.Ref, ":")
		if before, d, ok := strings.Cut(img.Ref, "@"); ok {
			repo, _, _ = strings.Cut(before, ":")
			img.Ref = repo + ":" + from.Tag.Ref.Value + "@" + d
		} else {
			img.Ref = repo + ":" + from.Tag.Ref.Value
		}
	}
}

func isReference(s string) bool {
	_, err := name.ParseReference(s)
	return err == nil && !strings.ContainsAny(s, " {}$")
}

// walk calls fn for every value of f's document: its path, the line of
// its key (or of the item), the node.
func (f *File) walk(fn func(path []string, keyLine int, n ast.Node)) {
	var rec func(path []string, n ast.Node)
	rec = func(path []string, n ast.Node) {
		switch v := n.(type) {
		case *ast.MappingNode, *ast.MappingValueNode:
			for _, kv := range pairs(mapping(v)) {
				k := scalarOf(kv.Key)
				line := 0
				if t := kv.Key.GetToken(); t != nil && t.Position != nil {
					line = t.Position.Line
				}
				p := append(slices.Clone(path), k)
				fn(p, line, kv.Value)
				rec(p, kv.Value)
			}
		case *ast.SequenceNode:
			for i, item := range v.Values {
				p := append(slices.Clone(path[:len(path):len(path)]), fmt.Sprintf("[%d]", i))
				if len(path) > 0 {
					p = append(slices.Clone(path[:len(path)-1]), path[len(path)-1]+fmt.Sprintf("[%d]", i))
				}
				line := 0
				if t := item.GetToken(); t != nil && t.Position != nil {
					line = t.Position.Line
				}
				fn(p, line, item)
				rec(p, item)
			}
		case *ast.TagNode:
			rec(path, v.Value)
		case *ast.AnchorNode:
			rec(path, v.Value)
		}
	}
	if f.root != nil {
		rec(nil, f.root)
	}
}

func lookupPath(root ast.Node, path []string) ast.Node {
	n := root
	for _, k := range path {
		if n = lookup(mapping(n), k); n == nil {
			return nil
		}
	}
	return n
}

func mapping(n ast.Node) *ast.MappingNode {
	switch n := n.(type) {
	case *ast.MappingNode:
		return n
	case *ast.MappingValueNode:
		return &ast.MappingNode{BaseNode: n.BaseNode, Values: []*ast.MappingValueNode{n}}
	case *ast.TagNode:
		return mapping(n.Value)
	case *ast.AnchorNode:
		return mapping(n.Value)
	}
	return nil
}

func pairs(m *ast.MappingNode) []*ast.MappingValueNode {
	if m == nil {
		return nil
	}
	return m.Values
}

func lookup(m *ast.MappingNode, k string) ast.Node {
	for _, kv := range pairs(m) {
		if scalarOf(kv.Key) == k {
			return kv.Value
		}
	}
	return nil
}

func scalarOf(n ast.Node) string {
	switch n := n.(type) {
	case *ast.StringNode:
		return n.Value
	case *ast.MappingKeyNode:
		return scalarOf(n.Value)
	case *ast.NullNode:
		return ""
	case ast.ScalarNode:
		if t := n.GetToken(); t != nil {
			return t.Value
		}
	}
	return ""
}
