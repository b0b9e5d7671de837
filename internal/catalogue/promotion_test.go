package catalogue

import (
	"errors"
	"strings"
	"testing"
)

// TestCheckPromotion: a promotion follows the catalogue's from; the
// reversed pair, a pair from another environment and a pair into an
// environment without from are refused, each naming the declared
// direction.
func TestCheckPromotion(t *testing.T) {
	c := &Catalogue{Environments: []*Environment{
		{Name: "dev"}, {Name: "staging", From: "dev"}, {Name: "production", From: "staging"}, {Name: "lab"},
	}}
	for _, tc := range []struct {
		from, to string
		want     string // "" : allowed
	}{
		{"staging", "production", ""},
		{"dev", "staging", ""},
		{"production", "staging", `environment "production" promotes from "staging" (from = "staging"), so builds move staging → production, never back; name them in that order: pin promote staging production`},
		{"dev", "production", `environment "production" promotes from "staging" (from = "staging"), not from "dev": pin promote staging production, or change its from in the catalogue`},
		{"staging", "lab", `environment "lab" declares no from, so no environment promotes into it; write from = "staging" in its environment block to promote staging → lab`},
		{"staging", "dev", `environment "staging" promotes from "dev" (from = "dev"), so builds move dev → staging, never back; name them in that order: pin promote dev staging`},
	} {
		err := c.CheckPromotion(tc.from, tc.to)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s → %s: %v", tc.from, tc.to, err)
			}
			continue
		}
		var pe *PromotionError
		if !errors.As(err, &pe) || err.Error() != tc.want {
			t.Errorf("%s → %s:\n got %v\nwant %s", tc.from, tc.to, err, tc.want)
		}
		if !strings.Contains(err.Error(), "pin promote") && !strings.Contains(err.Error(), "from =") {
			t.Errorf("%s → %s names no next step: %v", tc.from, tc.to, err)
		}
	}
}
