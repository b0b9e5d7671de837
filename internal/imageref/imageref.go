package imageref

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// Kind says where in a file an image reference was found.
type Kind int

const (
	// Compose is services.<name>.image of a Compose file.
	Compose Kind = iota
	// Container is the image of a container, init container or ephemeral
	// container in a Kubernetes object (any depth: pod templates, job
	// templates of CronJobs).
	Container
)

// Ref is one image reference in a YAML file.
type Ref struct {
	File string
	// Line and Column are 1-based: where the value starts (its opening
	// quote, when quoted).
	Line, Column int
	// Value is the reference as YAML reads it (through an alias, the
	// anchored value); Raw is its text in the file (with quotes, when
	// quoted; "*name" for an alias).
	Value, Raw string
	// Form says how the value is written when Apply cannot rewrite it
	// where it is: "the YAML alias *img", "a YAML block scalar (>-)". ""
	// for a plain or quoted value (behind an anchor or a tag too).
	Form string
	// Anchor is the name of the YAML anchor the value carries (image: &img
	// …), Alias the anchor an alias names (image: *img); "" when none.
	Anchor, Alias string
	Kind          Kind
	// Service is the Compose service (Kind Compose); Container the
	// container's name (Kind Container), and Object "<kind>/<name>" of the
	// document holding it, Doc its 0-based index in the file.
	Service, Container, Object string
	Doc                        int
}

// Where renders "file:line".
func (r Ref) Where() string { return fmt.Sprintf("%s:%d", r.File, r.Line) }

// SyntaxError is a file that is not YAML.
type SyntaxError struct {
	File         string
	Line, Column int
	Msg          string
}

func (e *SyntaxError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d:%d: not valid YAML: %s", e.File, e.Line, e.Column, e.Msg)
	}
	return fmt.Sprintf("%s: not valid YAML: %s", e.File, e.Msg)
}

// BOM is the UTF-8 byte-order mark.
var BOM = []byte("\xef\xbb\xbf")

// Parse parses src (named file) and returns its documents. A syntax error
// is a *SyntaxError with the line.
//
// A byte-order mark at the start of src (as editors on Windows write it;
// YAML allows one at the start of a stream) is read past: lines and
// columns are those of the text after it.
func Parse(file string, src []byte) (*ast.File, error) {
	f, err := parser.ParseBytes(bytes.TrimPrefix(src, BOM), parser.ParseComments)
	if err != nil {
		se := &SyntaxError{File: file, Msg: err.Error()}
		var ye interface{ GetToken() *token.Token }
		if errors.As(err, &ye) && ye.GetToken() != nil && ye.GetToken().Position != nil {
			se.Line, se.Column = ye.GetToken().Position.Line, ye.GetToken().Position.Column
			se.Msg = firstLine(err)
		}
		return nil, se
	}
	return f, nil
}

// firstLine is the message of a goccy error without its source excerpt.
func firstLine(err error) string {
	msg := err.Error()
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	// "[3:5] mapping value is not allowed" → the message alone.
	if strings.HasPrefix(msg, "[") {
		if i := strings.Index(msg, "] "); i > 0 {
			msg = msg[i+2:]
		}
	}
	return msg
}

// ComposeRefs returns the services.<name>.image references of a Compose
// file, in file order.
func ComposeRefs(file string, src []byte) ([]Ref, error) {
	f, err := Parse(file, src)
	if err != nil {
		return nil, err
	}
	var out []Ref
	for i, doc := range f.Docs {
		anchors := anchorsOf(doc.Body)
		services := lookup(mapping(doc.Body), "services")
		for _, svc := range pairs(mapping(services)) {
			for _, kv := range pairs(mapping(svc.Value)) {
				if key(kv) == "image" {
					if r, ok := scalarRef(file, kv.Value, anchors); ok {
						r.Kind, r.Service, r.Doc = Compose, key(svc), i
						out = append(out, r)
					}
				}
			}
		}
	}
	return out, nil
}

// Object is one Kubernetes object of a manifest file: its apiVersion,
// kind, name and place.
type Object struct {
	APIVersion, Kind, Name string
	Line                   int
	Doc                    int
}

// ManifestRefs returns the container images of every Kubernetes object in
// a manifest file, in file order, and the objects. A document without
// apiVersion and kind is not a Kubernetes object: an error naming its line.
// Documents that hold nothing, only comments or null are skipped, as
// kubectl skips them.
func ManifestRefs(file string, src []byte) ([]Ref, []Object, error) {
	f, err := Parse(file, src)
	if err != nil {
		return nil, nil, err
	}
	var refs []Ref
	var objs []Object
	for i, doc := range f.Docs {
		switch doc.Body.(type) {
		case nil, *ast.CommentGroupNode, *ast.CommentNode, *ast.NullNode:
			continue // an empty document between "---", or only comments
		}
		anchors := anchorsOf(doc.Body)
		m := mapping(doc.Body)
		apiVersion, kind := scalar(lookup(m, "apiVersion")), scalar(lookup(m, "kind"))
		line := 1
		if t := doc.Body.GetToken(); t != nil && t.Position != nil {
			line = t.Position.Line
		}
		if m == nil || apiVersion == "" || kind == "" {
			return nil, nil, fmt.Errorf("%s:%d: not a Kubernetes object: a manifest document needs apiVersion and kind", file, line)
		}
		o := Object{APIVersion: apiVersion, Kind: kind, Name: scalar(lookup(mapping(lookup(m, "metadata")), "name")), Line: line, Doc: i}
		objs = append(objs, o)
		walkContainers(doc.Body, func(list string, c *ast.MappingNode) {
			for _, kv := range pairs(c) {
				if key(kv) == "image" {
					if r, ok := scalarRef(file, kv.Value, anchors); ok {
						r.Kind, r.Doc = Container, i
						r.Container = scalar(lookup(c, "name"))
						r.Object = strings.ToLower(o.Kind) + "/" + o.Name
						refs = append(refs, r)
					}
				}
			}
		})
	}
	return refs, objs, nil
}

// walkContainers calls fn for each container mapping under a
// containers, initContainers or ephemeralContainers sequence.
func walkContainers(n ast.Node, fn func(list string, c *ast.MappingNode)) {
	switch n := n.(type) {
	case *ast.MappingNode:
		for _, kv := range n.Values {
			k := key(kv)
			if seq, ok := kv.Value.(*ast.SequenceNode); ok && (k == "containers" || k == "initContainers" || k == "ephemeralContainers") {
				for _, v := range seq.Values {
					if c := mapping(v); c != nil {
						fn(k, c)
					}
				}
				continue
			}
			walkContainers(kv.Value, fn)
		}
	case *ast.MappingValueNode:
		walkContainers(&ast.MappingNode{Values: []*ast.MappingValueNode{n}}, fn)
	case *ast.SequenceNode:
		for _, v := range n.Values {
			walkContainers(v, fn)
		}
	case *ast.TagNode:
		walkContainers(n.Value, fn)
	case *ast.AnchorNode:
		walkContainers(n.Value, fn)
	}
}

// mapping returns n as a mapping, or nil.
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

func key(kv *ast.MappingValueNode) string {
	if kv.Key == nil {
		return ""
	}
	return scalar(kv.Key)
}

func lookup(m *ast.MappingNode, k string) ast.Node {
	for _, kv := range pairs(m) {
		if key(kv) == k {
			return kv.Value
		}
	}
	return nil
}

// scalar returns a scalar node's string value, or "".
func scalar(n ast.Node) string {
	switch n := n.(type) {
	case *ast.StringNode:
		return n.Value
	case ast.ScalarNode:
		if t := n.GetToken(); t != nil {
			return t.Value
		}
	case *ast.MappingKeyNode:
		return scalar(n.Value)
	}
	return ""
}

// scalarRef makes a Ref of a scalar value node: a plain or quoted value
// (behind an anchor or a tag too), which Apply can rewrite where it is, or
// an alias or a block scalar, whose Form says why it cannot. anchors are
// the document's anchored values by name.
func scalarRef(file string, n ast.Node, anchors map[string]ast.Node) (Ref, bool) {
	switch v := n.(type) {
	case *ast.TagNode:
		return scalarRef(file, v.Value, anchors)
	case *ast.AnchorNode:
		r, ok := scalarRef(file, v.Value, anchors)
		if ok && v.Name != nil {
			r.Anchor = scalar(v.Name)
		}
		return r, ok
	case *ast.AliasNode:
		t := v.GetToken()
		if t == nil || t.Position == nil || v.Value == nil {
			return Ref{}, false
		}
		name := scalar(v.Value)
		r := Ref{File: file, Line: t.Position.Line, Column: t.Position.Column, Raw: "*" + name, Alias: name, Form: "the YAML alias *" + name}
		if a, ok := scalarRef(file, anchors[name], anchors); ok {
			r.Value = a.Value
		}
		return r, true
	case *ast.LiteralNode:
		t := v.GetToken()
		if t == nil || t.Position == nil || v.Value == nil {
			return Ref{}, false
		}
		return Ref{File: file, Line: t.Position.Line, Column: t.Position.Column, Raw: t.Value,
			Value: strings.TrimSpace(v.Value.Value), Form: "a YAML block scalar (" + t.Value + ")"}, true
	}
	s, ok := n.(ast.ScalarNode)
	if !ok || n == nil {
		return Ref{}, false
	}
	t := s.GetToken()
	if t == nil || t.Position == nil {
		return Ref{}, false
	}
	raw := t.Value
	switch t.Type {
	case token.DoubleQuoteType:
		raw = `"` + strings.ReplaceAll(t.Value, `"`, `\"`) + `"`
	case token.SingleQuoteType:
		raw = "'" + strings.ReplaceAll(t.Value, "'", "''") + "'"
	}
	return Ref{File: file, Line: t.Position.Line, Column: t.Position.Column, Value: t.Value, Raw: raw}, true
}

// anchorsOf returns the anchored values of a document by anchor name; a
// name anchored twice is the later value, as YAML reads an alias after
// both.
func anchorsOf(doc ast.Node) map[string]ast.Node {
	out := map[string]ast.Node{}
	if doc == nil {
		return out
	}
	ast.Walk(anchorVisitor(out), doc)
	return out
}

type anchorVisitor map[string]ast.Node

func (a anchorVisitor) Visit(n ast.Node) ast.Visitor {
	if v, ok := n.(*ast.AnchorNode); ok && v.Name != nil {
		a[scalar(v.Name)] = v.Value
	}
	return a
}

// Edit replaces one reference's value with New.
type Edit struct {
	Ref Ref
	New string
}

// Apply returns src with each edit's reference replaced by its new value,
// quoted as the old one was, and every other byte unchanged. An edit whose
// reference is not where it says (the file changed since it was read) is
// an error.
//
// A byte-order mark at the start of src is kept, and the edits placed as
// Parse read them, after it.
func Apply(src []byte, edits []Edit) ([]byte, error) {
	if rest, ok := bytes.CutPrefix(src, BOM); ok {
		out, err := Apply(rest, edits)
		if err != nil {
			return nil, err
		}
		return append(slices.Clone(BOM), out...), nil
	}
	lines := bytes.SplitAfter(src, []byte("\n"))
	// Right to left on each line, so that an edit leaves the columns of
	// those still to come where they were.
	edits = slices.Clone(edits)
	slices.SortFunc(edits, func(a, b Edit) int {
		if a.Ref.Line != b.Ref.Line {
			return a.Ref.Line - b.Ref.Line
		}
		return b.Ref.Column - a.Ref.Column
	})
	for _, e := range edits {
		r := e.Ref
		if r.Form != "" {
			return nil, fmt.Errorf("%s: image %q is written as %s, which pin does not rewrite", r.Where(), r.Value, r.Form)
		}
		if r.Line < 1 || r.Line > len(lines) {
			return nil, fmt.Errorf("%s: line out of range", r.Where())
		}
		line := lines[r.Line-1]
		start := columnOffset(line, r.Column)
		// The parser places a tagged value (!!str x) at the blank before it.
		for start >= 0 && start < len(line) && line[start] == ' ' && !bytes.HasPrefix(line[start:], []byte(r.Raw)) {
			start++
		}
		if start < 0 || !bytes.HasPrefix(line[start:], []byte(r.Raw)) {
			return nil, fmt.Errorf("%s: image reference %q not found where it was read", r.Where(), r.Value)
		}
		repl := e.New
		switch {
		case strings.HasPrefix(r.Raw, `"`):
			repl = `"` + e.New + `"`
		case strings.HasPrefix(r.Raw, "'"):
			repl = "'" + e.New + "'"
		}
		var b []byte
		b = append(b, line[:start]...)
		b = append(b, repl...)
		b = append(b, line[start+len(r.Raw):]...)
		lines[r.Line-1] = b
	}
	return bytes.Join(lines, nil), nil
}

// columnOffset turns a 1-based column (in characters) into a byte offset
// of line, or -1.
func columnOffset(line []byte, col int) int {
	n := 1
	for i := range string(line) {
		if n == col {
			return i
		}
		n++
	}
	return -1
}

// ValueRef makes a Ref of the scalar value node n of file, for Apply: a
// plain or quoted value, behind an anchor or a tag too. It reports false
// for anything else (a mapping, an alias, a block scalar).
func ValueRef(file string, n ast.Node) (Ref, bool) {
	r, ok := scalarRef(file, n, nil)
	return r, ok && r.Form == ""
}
