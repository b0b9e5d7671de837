package version

// Agree reports whether two claims about one image's version agree: their
// cores are equal over the shorter precision ("1.27" and "1.27.9") and their
// pre-release markers are equal ("rc.1" and "rc1"). Prefix and suffix are
// not compared: labels rarely carry them.
func Agree(a, b Version) bool {
	for i := range min(len(a.Parts), len(b.Parts)) {
		if cmpDigits(a.Parts[i], b.Parts[i]) != 0 {
			return false
		}
	}
	switch {
	case a.Pre == "" && b.Pre == "":
		return true
	case a.Pre == "" || b.Pre == "":
		return false
	}
	return comparePre(preIdents(a.Pre), preIdents(b.Pre)) == 0
}

// Relation is what two versions of different variants say of the order of
// the images they name, each read as the interval its precision names:
// "1.27" is every 1.27.x, "1.27.3" is 1.27.3 (and its 1.27.3.x).
type Relation int

const (
	// Overlap: the intervals overlap both ways ("1.27.3" and "1.27", or
	// equal cores of different suffixes); the versions say nothing.
	Overlap Relation = iota
	// Less: every version a names is below every version b names.
	Less
	// LessEq: a is at most b ("1.27.0" is the bottom of "1.27").
	LessEq
	// Greater and GreaterEq mirror Less and LessEq.
	Greater
	GreaterEq
)

func (r Relation) String() string {
	switch r {
	case Less:
		return "<"
	case LessEq:
		return "<="
	case Greater:
		return ">"
	case GreaterEq:
		return ">="
	}
	return "overlap"
}

// Below reports whether the relation puts a at or below b (Less, LessEq).
func (r Relation) Below() bool { return r == Less || r == LessEq }

// Above reports whether the relation puts a at or above b (Greater,
// GreaterEq).
func (r Relation) Above() bool { return r == Greater || r == GreaterEq }

// Relate reads a and b as intervals and says how they lie: the cores over
// the shorter precision decide when they differ (strictly: "1.26.9" <
// "1.27"). When they are equal and the precisions too, a pre-release is
// below its release and pre-releases order by marker; equal versions
// overlap. When the more precise one only adds zeros ("1.27.0" against
// "1.27") it is the bottom of the other: LessEq, or Less when it is a
// pre-release and the other a release. Anything else overlaps: the
// versions say nothing and the caller needs other evidence. Relate is
// antisymmetric: Relate(b, a) mirrors Relate(a, b).
func Relate(a, b Version) Relation {
	k := min(len(a.Parts), len(b.Parts))
	for i := range k {
		switch cmpDigits(a.Parts[i], b.Parts[i]) {
		case -1:
			return Less
		case 1:
			return Greater
		}
	}
	switch {
	case len(a.Parts) > len(b.Parts):
		return inside(a, b, k)
	case len(a.Parts) < len(b.Parts):
		return mirror(inside(b, a, k))
	}
	switch {
	case a.Pre == "" && b.Pre == "":
		return Overlap
	case a.Pre == "":
		return Greater
	case b.Pre == "":
		return Less
	}
	switch comparePre(preIdents(a.Pre), preIdents(b.Pre)) {
	case -1:
		return Less
	case 1:
		return Greater
	}
	return Overlap
}

// inside relates m, more precise, to l, whose core m's first k parts equal.
func inside(m, l Version, k int) Relation {
	for _, p := range m.Parts[k:] {
		if trimZeros(p) != "0" {
			return Overlap
		}
	}
	switch {
	case m.Pre == "" && l.Pre == "":
		return LessEq
	case m.Pre != "" && l.Pre == "":
		return Less
	}
	return Overlap
}

func mirror(r Relation) Relation {
	switch r {
	case Less:
		return Greater
	case LessEq:
		return GreaterEq
	case Greater:
		return Less
	case GreaterEq:
		return LessEq
	}
	return Overlap
}
