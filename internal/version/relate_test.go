package version

import "testing"

func TestAgree(t *testing.T) {
	tests := []struct {
		a, b  string
		agree bool
	}{
		{"1.27", "1.27.9", true},
		{"1.27.9", "1.27", true},
		{"v1.27.3-rootless", "1.27.3", true},
		{"1.27.3", "1.27.3.0", true},
		{"1.27-alpine", "1.27.3", true},
		{"1.3.0-rc.1", "1.3.0-rc1", true},
		{"1.3-rc.1", "1.3.0-rc.1", true},
		{"1.30.0", "1.22.6", false},
		{"1.27", "1.28.0", false},
		{"1.27.3", "1.27.4", false},
		{"1.3.0-rc.1", "1.3.0", false},
		{"1.3.0-rc.1", "1.3.0-rc.2", false},
		{"1.3.0-alpha", "1.3.0-beta", false},
	}
	for _, tt := range tests {
		a, oka := (Scheme{}).Parse(tt.a)
		b, okb := (Scheme{}).Parse(tt.b)
		if !oka || !okb {
			t.Fatalf("%q or %q does not parse", tt.a, tt.b)
		}
		if got := Agree(a, b); got != tt.agree {
			t.Errorf("Agree(%s, %s) = %v, want %v", tt.a, tt.b, got, tt.agree)
		}
		if got := Agree(b, a); got != tt.agree {
			t.Errorf("Agree(%s, %s) = %v, want %v", tt.b, tt.a, got, tt.agree)
		}
	}
}

func TestRelate(t *testing.T) {
	tests := []struct {
		a, b string
		want Relation
	}{
		{"1.26.9", "v1.27.3", Less},
		{"1.26.9", "1.27.3-rootless", Less},
		{"1.27", "1.22.6", Greater},
		{"1.27", "1.28", Less},
		{"1.27.0", "1.27", LessEq},
		{"1.27.0.0", "1.27", LessEq},
		{"1.27.3.0", "1.27.3", LessEq},
		{"1.27.3", "1.27", Overlap},
		{"1.27.0.1", "1.27", Overlap},
		{"1.27.3-rootless", "1.27.3", Overlap},
		{"v1.27.3", "1.27.3", Overlap},
		{"1.27.3-rc.1-rootless", "1.27.3", Less},
		{"1.27.3-rc.1-rootless", "1.27.3-rc.2", Less},
		{"1.27.3-rc.1-rootless", "1.27.3-rc.1", Overlap},
		{"1.27.0-rc.1", "1.27", Less},
		{"1.27.3-rc.1", "1.27", Overlap},
		{"1.27.0", "1.27-rc.1", Overlap},
		{"1.27.0-rc.1", "1.27-rc.1", Overlap},
		{"1.26.9-rc.1", "1.27", Less},
	}
	mirror := map[Relation]Relation{Less: Greater, LessEq: GreaterEq, Overlap: Overlap, Greater: Less, GreaterEq: LessEq}
	for _, tt := range tests {
		a, oka := (Scheme{}).Parse(tt.a)
		b, okb := (Scheme{}).Parse(tt.b)
		if !oka || !okb {
			t.Fatalf("%q or %q does not parse", tt.a, tt.b)
		}
		if got := Relate(a, b); got != tt.want {
			t.Errorf("Relate(%s, %s) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
		if got := Relate(b, a); got != mirror[tt.want] {
			t.Errorf("Relate(%s, %s) = %v, want %v", tt.b, tt.a, got, mirror[tt.want])
		}
	}
}
