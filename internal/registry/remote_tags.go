package registry

import (
	"context"
	"fmt"
	"slices"
)

// Tags lists the repository's tags, every page of them, sorted.
func (r *Remote) Tags(ctx context.Context, repo string) ([]string, error) {
	target, err := r.repository(repo)
	if err != nil {
		return nil, err
	}
	fail := func(err error) error {
		return fmt.Errorf("listing tags of %s: %w", r.where(repo), classify(err))
	}
	if err := r.ready(ctx, target); err != nil {
		return nil, fail(err)
	}
	lister, err := r.puller().Lister(ctx, target)
	if err != nil {
		return nil, fail(err)
	}
	// Pages are followed by their Link header (screen refuses one to
	// another host); a page named twice is a loop.
	var tags []string
	seen := map[string]bool{}
	for lister.HasNext() {
		page, err := lister.Next(ctx)
		if err != nil {
			return nil, fail(err)
		}
		tags = append(tags, page.Tags...)
		if page.Next == "" {
			continue
		}
		if seen[page.Next] {
			return nil, fail(fmt.Errorf("the Link header loops back to %s, a page already read: %w", redactURL(page.Next), ErrRefused))
		}
		if len(seen) >= maxTagPages {
			return nil, fail(fmt.Errorf("more than %d pages of tags: %w", maxTagPages, ErrRefused))
		}
		seen[page.Next] = true
	}
	slices.Sort(tags)
	return slices.Compact(tags), nil
}
