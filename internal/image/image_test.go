package image

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReadLabels(t *testing.T) {
	for _, tc := range []struct {
		name string
		all  map[string]string
		want map[string]string
	}{
		{"none", nil, nil},
		{"only others", map[string]string{"maintainer": "x", "org.opencontainers.image.source": "https://example.org"}, nil},
		{"both, among others", map[string]string{
			LabelVersion: "1.2.3", LabelCreated: "2026-08-20T10:00:00Z", "maintainer": "x",
		}, map[string]string{LabelVersion: "1.2.3", LabelCreated: "2026-08-20T10:00:00Z"}},
		// Present but empty is kept as it is: an empty version label is
		// not the same as none to whoever reads it.
		{"empty value", map[string]string{LabelVersion: ""}, map[string]string{LabelVersion: ""}},
		// Label keys are case-sensitive: another case is another label.
		{"another case", map[string]string{"ORG.OPENCONTAINERS.IMAGE.VERSION": "9.9.9"}, nil},
	} {
		if d := cmp.Diff(tc.want, ReadLabels(tc.all)); d != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, d)
		}
	}
}
