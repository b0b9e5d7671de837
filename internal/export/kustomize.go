package export

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"

	"github.com/pin-tool/pin/internal/imageref"
)

// KustomizeImage is one entry of a kustomization's images: list.
type KustomizeImage struct {
	Name    string `yaml:"name"`
	NewName string `yaml:"newName,omitempty"`
	NewTag  string `yaml:"newTag,omitempty"`
	Digest  string `yaml:"digest,omitempty"`
	// TagSuffix is read, never written: kustomize appends it to the tag
	// the entry leaves (v5).
	TagSuffix string `yaml:"tagSuffix,omitempty"`
}

// Kustomize writes into kustomization.yaml (path, bytes old) an images:
// entry for each image the manifests refs name that a module covers:
// name as the manifests write the repository, newName the same, newTag
// and digest the lock's. An entry the list already has for that name is
// updated where it is: only the values of newName, newTag and digest
// change (a key is added, or newTag removed, as needed), its other keys
// and every comment stay. Entries for new names are appended, sorted by
// name, after the list's last entry; a file without images: gets the list
// at its end. Every other byte is kept. An images: list written in flow
// style ([…]) or empty is rewritten as a block list, the comment on its
// line kept.
func Kustomize(path string, cov *Coverage, refs []imageref.Ref, old []byte) (Result, error) {
	var r Result
	list, err := readImages(path, old)
	if err != nil {
		return r, err
	}
	want := map[string]KustomizeImage{}
	entry := map[string]int{} // name → its index in r.Entries
	// What every manifest reference of a name runs now, covered or not:
	// the entry written for the name applies to each.
	runs := map[string][]Named{}
	for _, ref := range refs {
		n := repoAsWritten(ref.Value)
		if named := list.runs(ref); !slices.Contains(runs[n], named) {
			runs[n] = append(runs[n], named)
		}
		m, why := cov.Workload(ref.Object, ref.Container, ref.Value)
		e := r.locked(cov, m, why, containerOf(ref), ref.Where(), ref.Value)
		if e == nil {
			continue
		}
		k := KustomizeImage{Name: n, NewName: n, NewTag: e.Tag, Digest: e.Digest}
		if w, ok := want[n]; ok {
			if w.Digest != e.Digest {
				return r, fmt.Errorf("%s: image %s is covered by modules locked at different digests; kustomize sets one per image name", ref.Where(), n)
			}
			continue
		}
		want[n] = k
		entry[n] = len(r.Entries)
		r.Entries = append(r.Entries, Entry{Where: path + ", images " + n, Module: m.Name, Old: describe(list.find(n).KustomizeImage), New: describe(k)})
	}
	for n, i := range entry {
		r.Entries[i].Named = runs[n]
	}
	names := make([]string, 0, len(want))
	for n := range want {
		names = append(names, n)
	}
	slices.Sort(names)
	out, err := list.apply(old, names, want)
	if err != nil {
		return r, fmt.Errorf("%s: %w", path, err)
	}
	sortEntries(r.Entries)
	r.Files = append(r.Files, File{Path: path, Bytes: out, Old: old})
	return r, nil
}

func describe(k KustomizeImage) string {
	if k.Name == "" {
		return ""
	}
	s := k.NewName
	if s == "" {
		s = k.Name
	}
	if k.NewTag != "" {
		s += ":" + k.NewTag
	}
	if k.Digest != "" {
		s += "@" + k.Digest
	}
	return s
}

// runs is the reference kustomize makes the manifest's reference ref run,
// and where that is said. Kustomize applies the entries one after another,
// each to what the ones before made, when its name is the image's
// repository as written then: newName replaces the repository; newTag,
// digest or both replace the tag and the digest together; tagSuffix is
// appended to the tag. Where is the line of the last entry that set the
// tag or digest (an entry written in flow style: the images: key's line),
// else the manifest's.
func (l imagesList) runs(ref imageref.Ref) Named {
	repo := repoAsWritten(ref.Value)
	tag, digest := splitTag(ref.Value)
	at := ref.Where()
	apply := func(k KustomizeImage, line int) {
		if k.Name != repo {
			return
		}
		if k.NewName != "" {
			repo = k.NewName
		}
		if k.NewTag != "" || k.Digest != "" {
			tag, digest = k.NewTag, k.Digest
			at = fmt.Sprintf("%s:%d", l.file, line)
		}
		if k.TagSuffix != "" && tag != "" {
			tag += k.TagSuffix
			at = fmt.Sprintf("%s:%d", l.file, line)
		}
	}
	for _, e := range l.entries {
		apply(e.KustomizeImage, e.lines["name"])
	}
	for _, k := range l.flow {
		apply(k, l.key)
	}
	s := repo
	if tag != "" {
		s += ":" + tag
	}
	if digest != "" {
		s += "@" + digest
	}
	return Named{s, at}
}

// imagesList is the top-level images: of a kustomization, as written.
type imagesList struct {
	file string
	// key is the images: key's line (1-based), 0 when the file has none.
	key int
	// block: the list is a block sequence, its entries those below (else
	// flow style, empty or null, whose entries are in flow).
	block   bool
	entries []imageEntry
	flow    []KustomizeImage
	// end is the last line of the list's value (1-based); indent the
	// column (0-based) of the entries' "-", keys that of their keys.
	end          int
	indent, keys int
}

// imageEntry is one entry of a block images: list.
type imageEntry struct {
	KustomizeImage
	// values are the entry's scalar values by key; last its last line.
	values map[string]imageref.Ref
	lines  map[string]int
	last   int
	keyCol int
}

func (l imagesList) find(name string) imageEntry {
	for _, e := range l.entries {
		if e.Name == name {
			return e
		}
	}
	for _, k := range l.flow {
		if k.Name == name {
			return imageEntry{KustomizeImage: k}
		}
	}
	return imageEntry{}
}

// readImages finds the top-level images: of a kustomization.
func readImages(path string, src []byte) (imagesList, error) {
	l := imagesList{file: path}
	f, err := imageref.Parse(path, src)
	if err != nil {
		return l, err
	}
	var doc struct {
		Images []KustomizeImage `yaml:"images"`
	}
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return l, fmt.Errorf("%s: not a kustomization: %w", path, err)
	}
	if len(f.Docs) == 0 {
		return l, nil
	}
	top, _ := f.Docs[0].Body.(*ast.MappingNode)
	if mv, ok := f.Docs[0].Body.(*ast.MappingValueNode); ok {
		top = &ast.MappingNode{Values: []*ast.MappingValueNode{mv}}
	}
	if top == nil {
		return l, nil
	}
	for _, kv := range top.Values {
		if kv.Key == nil || kv.Key.GetToken() == nil || kv.Key.GetToken().Value != "images" {
			continue
		}
		l.key = kv.Key.GetToken().Position.Line
		l.end = lastLine(kv.Value, l.key)
		seq, ok := kv.Value.(*ast.SequenceNode)
		if !ok || seq.IsFlowStyle || len(seq.Values) == 0 {
			l.flow = doc.Images
			return l, nil
		}
		l.block = true
		l.indent = seq.GetToken().Position.Column - 1
		for i, v := range seq.Values {
			e, err := readEntry(path, v)
			if err != nil {
				return l, err
			}
			if i == 0 {
				l.keys = e.keyCol
			}
			l.entries = append(l.entries, e)
		}
		return l, nil
	}
	return l, nil
}

// readEntry reads one block entry of images:.
func readEntry(path string, n ast.Node) (imageEntry, error) {
	e := imageEntry{values: map[string]imageref.Ref{}, lines: map[string]int{}}
	var kvs []*ast.MappingValueNode
	switch m := n.(type) {
	case *ast.MappingNode:
		kvs = m.Values
	case *ast.MappingValueNode:
		kvs = []*ast.MappingValueNode{m}
	}
	line := 0
	if t := n.GetToken(); t != nil && t.Position != nil {
		line = t.Position.Line
	}
	if len(kvs) == 0 || kvs[0].Key == nil {
		return e, fmt.Errorf("%s:%d: an images: entry that is not a mapping", path, line)
	}
	e.keyCol = kvs[0].Key.GetToken().Position.Column - 1
	for _, kv := range kvs {
		k := kv.Key.GetToken()
		e.lines[k.Value] = k.Position.Line
		e.last = max(e.last, lastLine(kv.Value, k.Position.Line))
		ref, ok := imageref.ValueRef(path, kv.Value)
		if !ok {
			continue
		}
		e.values[k.Value] = ref
		switch k.Value {
		case "name":
			e.Name = ref.Value
		case "newName":
			e.NewName = ref.Value
		case "newTag":
			e.NewTag = ref.Value
		case "digest":
			e.Digest = ref.Value
		case "tagSuffix":
			e.TagSuffix = ref.Value
		}
	}
	return e, nil
}

// lastLine is the last line a value's tokens are on (comments left out),
// at least from.
func lastLine(n ast.Node, from int) int {
	last := from
	if n == nil {
		return last
	}
	ast.Walk(lineVisitor{&last}, n)
	return last
}

type lineVisitor struct{ last *int }

func (v lineVisitor) Visit(n ast.Node) ast.Visitor {
	switch n.(type) {
	case *ast.CommentGroupNode, *ast.CommentNode:
		return nil
	}
	if t := n.GetToken(); t != nil && t.Position != nil {
		*v.last = max(*v.last, t.Position.Line)
	}
	return v
}

// apply returns src with the entries of names (by want) written into the
// list.
func (l imagesList) apply(src []byte, names []string, want map[string]KustomizeImage) ([]byte, error) {
	if !l.block {
		return l.replaceFlow(src, names, want), nil
	}
	var edits []imageref.Edit
	inserts := map[int][]string{} // after line → lines
	deletes := map[int]bool{}
	var added []string
	for _, n := range names {
		w := want[n]
		i := slices.IndexFunc(l.entries, func(e imageEntry) bool { return e.Name == n })
		if i < 0 {
			added = append(added, entryLines(w, strings.Repeat(" ", l.indent), l.keys-l.indent)...)
			continue
		}
		e := l.entries[i]
		pad := strings.Repeat(" ", e.keyCol)
		for _, kv := range [][2]string{{"newName", w.NewName}, {"newTag", w.NewTag}, {"digest", w.Digest}} {
			key, val := kv[0], kv[1]
			ref, has := e.values[key]
			switch {
			case has && val == "":
				deletes[e.lines[key]] = true
			case has && ref.Value != val:
				edits = append(edits, imageref.Edit{Ref: ref, New: valueFor(key, val, ref)})
			case !has && val != "" && e.lines[key] != 0:
				return nil, fmt.Errorf("line %d: the %s of image %s is not a plain value; write it as one", e.lines[key], key, n)
			case !has && val != "":
				inserts[e.last] = append(inserts[e.last], pad+key+": "+valueFor(key, val, imageref.Ref{})+"\n")
			}
		}
	}
	if len(added) > 0 {
		inserts[l.end] = append(inserts[l.end], added...)
	}
	out, err := imageref.Apply(src, edits)
	if err != nil {
		return nil, err
	}
	lines := bytes.SplitAfter(out, []byte("\n"))
	if n := len(lines); n > 0 && len(lines[n-1]) == 0 {
		lines = lines[:n-1]
	}
	var b bytes.Buffer
	for i, line := range lines {
		if !deletes[i+1] {
			b.Write(line)
		}
		if ins := inserts[i+1]; len(ins) > 0 {
			if !bytes.HasSuffix(line, []byte("\n")) {
				b.WriteByte('\n')
			}
			for _, s := range ins {
				b.WriteString(s)
			}
		}
	}
	return b.Bytes(), nil
}

// replaceFlow writes the list in block style: in place of a flow or empty
// value (the comment on the images: line kept), or at the end of a file
// without one.
func (l imagesList) replaceFlow(src []byte, names []string, want map[string]KustomizeImage) []byte {
	all := map[string]KustomizeImage{}
	for _, k := range l.flow {
		if _, dup := all[k.Name]; !dup {
			all[k.Name] = k
		}
	}
	for _, n := range names {
		all[n] = want[n]
	}
	keys := make([]string, 0, len(all))
	for n := range all {
		keys = append(keys, n)
	}
	slices.Sort(keys)
	var block []string
	for _, n := range keys {
		block = append(block, entryLines(all[n], "", 2)...)
	}
	if l.key == 0 {
		out := slices.Clone(src)
		if len(out) > 0 && !bytes.HasSuffix(out, []byte("\n")) {
			out = append(out, '\n')
		}
		out = append(out, "images:\n"...)
		return append(out, strings.Join(block, "")...)
	}
	lines := bytes.SplitAfter(src, []byte("\n"))
	head := "images:"
	if _, comment, ok := strings.Cut(string(lines[l.key-1]), " #"); ok {
		head += " #" + strings.TrimRight(comment, "\r\n")
	}
	var b bytes.Buffer
	for _, line := range lines[:l.key-1] {
		b.Write(line)
	}
	b.WriteString(head + "\n")
	b.WriteString(strings.Join(block, ""))
	for _, line := range lines[min(l.end, len(lines)):] {
		b.Write(line)
	}
	return b.Bytes()
}

// entryLines renders one entry as block lines: "-" at indent, its keys
// step columns further.
func entryLines(k KustomizeImage, indent string, step int) []string {
	pad := indent + strings.Repeat(" ", step)
	out := []string{indent + "-" + strings.Repeat(" ", step-1) + "name: " + k.Name + "\n"}
	if k.NewName != "" {
		out = append(out, pad+"newName: "+k.NewName+"\n")
	}
	if k.NewTag != "" {
		out = append(out, pad+"newTag: "+valueFor("newTag", k.NewTag, imageref.Ref{})+"\n")
	}
	if k.Digest != "" {
		out = append(out, pad+"digest: "+k.Digest+"\n")
	}
	return out
}

// valueFor is how val is written for key in place of old (zero: a new
// value). A tag is quoted, so that YAML never reads it as a number
// ("1.36"); a quoted old value keeps its quotes (imageref.Apply adds
// them).
func valueFor(key, val string, old imageref.Ref) string {
	if key != "newTag" || strings.HasPrefix(old.Raw, `"`) || strings.HasPrefix(old.Raw, "'") {
		return val
	}
	return fmt.Sprintf("%q", val)
}
