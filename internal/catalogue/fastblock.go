package catalogue

import (
	"bytes"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// fastBlock builds, for one piece of a catalogue (a top-level block and the
// blank lines after it), the very syntax tree hclsyntax.ParseConfig builds,
// when the block is in the plain layout pin's examples, its scaffolding and
// most hand-written catalogues use:
//
//	module "forge" {
//	  image  = "registry.example.org/forge/forgejo"
//	  policy = "at-least-running"
//	  one_way = true
//	}
//
// a block type and one label on the first line, then one attribute per
// line whose value is a quoted string or true or false, then "}" alone in
// the first column; ASCII, spaces, and no escapes, templates, comments or
// nested blocks. ok is false for anything else, which hclsyntax parses.
//
// hclsyntax's lexer counts every token's columns in grapheme clusters, and
// reading the catalogue that way was a tenth of a warm 1,100-module
// resolve's CPU. FuzzFastBlock and TestFastBlockCatalogues hold
// the tree built here to hclsyntax's, field by field.
func fastBlock(src []byte, filename string, start hcl.Pos) (*hcl.File, bool) {
	at := start // the position of src[i], i = at.Byte - start.Byte
	off := start.Byte
	rng := func(from, to hcl.Pos) hcl.Range { return hcl.Range{Filename: filename, Start: from, End: to} }
	// advance returns the position n bytes further on the same line.
	advance := func(p hcl.Pos, n int) hcl.Pos { return hcl.Pos{Line: p.Line, Column: p.Column + n, Byte: p.Byte + n} }

	line, rest, ok := cutLine(src)
	if !ok {
		return nil, false
	}
	// <type> "<label>" {
	typ, after, ok := ident(line)
	if !ok || len(after) < 5 || after[0] != ' ' || after[1] != '"' {
		return nil, false
	}
	label, tail, ok := plainString(after[1:])
	if !ok || string(tail) != " {" {
		return nil, false
	}
	typeStart := at
	labelStart := advance(at, len(typ)+1)
	labelEnd := advance(labelStart, len(label)+2)
	braceStart := advance(labelEnd, 1)
	braceEnd := advance(braceStart, 1)
	blk := &hclsyntax.Block{
		Type:           string(typ),
		Labels:         []string{string(label)},
		TypeRange:      rng(typeStart, advance(typeStart, len(typ))),
		LabelRanges:    []hcl.Range{rng(labelStart, labelEnd)},
		OpenBraceRange: rng(braceStart, braceEnd),
	}
	body := &hclsyntax.Body{Attributes: hclsyntax.Attributes{}, Blocks: hclsyntax.Blocks{}}
	at = hcl.Pos{Line: at.Line + 1, Column: 1, Byte: at.Byte + len(line) + 1}

	// The attributes, then "}".
	for {
		line, rest, ok = cutLine(rest)
		if !ok && len(line) == 0 {
			return nil, false // the file ends inside the block
		}
		if string(line) == "}" {
			closeEnd := advance(at, 1)
			blk.CloseBraceRange = rng(at, closeEnd)
			body.SrcRange = rng(braceStart, closeEnd)
			body.EndRange = rng(closeEnd, closeEnd)
			if !ok { // "}" at the very end, no newline
				rest = nil
			}
			at = hcl.Pos{Line: at.Line + 1, Column: 1, Byte: at.Byte + len(line) + 1}
			break
		}
		if !ok {
			return nil, false
		}
		indent := 0
		for indent < len(line) && line[indent] == ' ' {
			indent++
		}
		if indent == 0 {
			return nil, false
		}
		name, after, ok := ident(line[indent:])
		if !ok {
			return nil, false
		}
		spaces := 0
		for spaces < len(after) && after[spaces] == ' ' {
			spaces++
		}
		if spaces >= len(after) || after[spaces] != '=' {
			return nil, false
		}
		after = after[spaces+1:]
		more := 0
		for more < len(after) && after[more] == ' ' {
			more++
		}
		value := after[more:]
		nameStart := advance(at, indent)
		nameEnd := advance(nameStart, len(name))
		eqStart := advance(nameEnd, spaces)
		valueStart := advance(eqStart, 1+more)
		valueEnd := advance(valueStart, len(value))
		var expr hclsyntax.Expression
		switch string(value) {
		case "true":
			expr = &hclsyntax.LiteralValueExpr{Val: cty.True, SrcRange: rng(valueStart, valueEnd)}
		case "false":
			expr = &hclsyntax.LiteralValueExpr{Val: cty.False, SrcRange: rng(valueStart, valueEnd)}
		default:
			s, tail, ok := plainString(value)
			if !ok || len(tail) > 0 || len(s) == 0 {
				return nil, false
			}
			expr = &hclsyntax.TemplateExpr{
				Parts:    []hclsyntax.Expression{&hclsyntax.LiteralValueExpr{Val: cty.StringVal(string(s)), SrcRange: rng(advance(valueStart, 1), advance(valueEnd, -1))}},
				SrcRange: rng(valueStart, valueEnd),
			}
		}
		if _, dup := body.Attributes[string(name)]; dup {
			return nil, false // hclsyntax says so, with where
		}
		body.Attributes[string(name)] = &hclsyntax.Attribute{
			Name:        string(name),
			Expr:        expr,
			SrcRange:    rng(nameStart, valueEnd),
			NameRange:   rng(nameStart, nameEnd),
			EqualsRange: rng(eqStart, advance(eqStart, 1)),
		}
		at = hcl.Pos{Line: at.Line + 1, Column: 1, Byte: at.Byte + len(line) + 1}
	}
	// Only blank lines may follow.
	for _, c := range rest {
		if c != '\n' {
			return nil, false
		}
	}
	end := hcl.Pos{Line: at.Line + bytes.Count(rest, []byte("\n")), Column: 1, Byte: off + len(src)}
	if len(rest) == 0 && (len(src) == 0 || src[len(src)-1] != '\n') {
		end = hcl.Pos{Line: at.Line - 1, Column: 2, Byte: off + len(src)} // ends on "}"
	}
	blk.Body = body
	top := &hclsyntax.Body{
		Attributes: hclsyntax.Attributes{},
		Blocks:     hclsyntax.Blocks{blk},
		SrcRange:   rng(start, end),
		EndRange:   rng(end, end),
	}
	return &hcl.File{Body: top, Bytes: src}, true
}

// cutLine returns src's first line without its newline, and what follows;
// ok is false when src has no newline (line is then all of src).
func cutLine(src []byte) (line, rest []byte, ok bool) {
	i := bytes.IndexByte(src, '\n')
	if i < 0 {
		return src, nil, false
	}
	return src[:i], src[i+1:], true
}

// ident reads an ASCII identifier at the start of b: a letter or _, then
// letters, digits, _ and -.
func ident(b []byte) (id, rest []byte, ok bool) {
	i := 0
	for i < len(b) {
		c := b[i]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
		if !letter && (i == 0 || !(c >= '0' && c <= '9' || c == '-')) {
			break
		}
		i++
	}
	return b[:i], b[i:], i > 0
}

// plainString reads a quoted string at the start of b whose content is
// printable ASCII without a backslash (no escapes) and without $ or %
// (no templates); s is the content, without the quotes.
func plainString(b []byte) (s, rest []byte, ok bool) {
	if len(b) == 0 || b[0] != '"' {
		return nil, nil, false
	}
	for i := 1; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return b[1:i], b[i+1:], true
		case c < 0x20 || c > 0x7e || c == '\\' || c == '$' || c == '%':
			return nil, nil, false
		}
	}
	return nil, nil, false
}
