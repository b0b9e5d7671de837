package catalogue

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
)

// Selector is a Kubernetes label selector as kubectl -l takes it
// ("app=forgejo", "app in (forgejo),tier!=cache"). It keeps Kubernetes'
// libraries inside this package: what reads the catalogue matches labels
// with it and imports nothing of Kubernetes. A nil or zero Selector matches
// nothing. A Selector is immutable and safe for concurrent use.
type Selector struct {
	text string
	sel  labels.Selector
}

// ParseSelector reads a label selector as kubectl -l takes it. It returns a
// message saying what to write instead when the selector is invalid or
// empty (which would match every pod).
func ParseSelector(s string) (*Selector, string) {
	if strings.TrimSpace(s) == "" {
		return nil, "The selector is empty, which matches every pod. Write labels to match, as kubectl -l takes them, such as \"app=forgejo\" or \"app in (forgejo),tier!=cache\"."
	}
	sel, err := labels.Parse(s)
	if err != nil {
		return nil, fmt.Sprintf("%q is not a label selector (%v). Write one as kubectl -l takes it, such as \"app=forgejo\" or \"app in (forgejo),tier!=cache\".", s, err)
	}
	return &Selector{text: s, sel: sel}, ""
}

// Matches reports whether a pod with these labels is selected. It only
// reads the map.
func (s *Selector) Matches(set map[string]string) bool {
	if s == nil || s.sel == nil {
		return false
	}
	return s.sel.Matches(labels.Set(set))
}

// String returns the selector as the catalogue wrote it; "" for nil.
func (s *Selector) String() string {
	if s == nil {
		return ""
	}
	return s.text
}
