package resolve

import (
	"slices"
	"testing"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/order"
	"github.com/pin-tool/pin/internal/verify"
	"github.com/pin-tool/pin/lock"
)

// TestLockWordsAgree: the lock names its values itself; the packages that
// decide them write the same words, so that every entry resolve writes is
// one the lock reads back, and every policy a catalogue takes is one a
// lock accepts.
func TestLockWordsAgree(t *testing.T) {
	var policies []lock.Policy
	for _, p := range catalogue.Policies {
		policies = append(policies, lock.Policy(p))
	}
	if !slices.Equal(policies, lock.Policies) {
		t.Errorf("catalogue's policies %v, the lock's %v", catalogue.Policies, lock.Policies)
	}
	for _, r := range [][2]string{
		{string(order.RuleContent), string(lock.RuleContent)},
		{string(order.RuleVersion), string(lock.RuleVersion)},
		{string(order.RuleCreated), string(lock.RuleCreated)},
		{verify.MethodCosignKey, string(lock.MethodCosignKey)},
		{verify.MethodCosignKeyless, string(lock.MethodCosignKeyless)},
	} {
		if r[0] != r[1] {
			t.Errorf("resolve writes %q where the lock names %q", r[0], r[1])
		}
	}
}
