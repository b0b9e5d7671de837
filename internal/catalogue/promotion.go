package catalogue

import "fmt"

// PromotionError is a promotion between two environments that the
// catalogue does not declare: To's from names another environment, or
// none.
type PromotionError struct {
	From, To string
	// Declared is To's from ("" when it has none); Reverse is From's, when
	// it names To: the pair was written the wrong way round.
	Declared string
	Reverse  bool
}

func (e *PromotionError) Error() string {
	switch {
	case e.Reverse:
		return fmt.Sprintf("environment %q promotes from %q (from = %q), so builds move %s → %s, never back; name them in that order: pin promote %s %s",
			e.From, e.To, e.To, e.To, e.From, e.To, e.From)
	case e.Declared != "":
		return fmt.Sprintf("environment %q promotes from %q (from = %q), not from %q: pin promote %s %s, or change its from in the catalogue",
			e.To, e.Declared, e.Declared, e.From, e.Declared, e.To)
	}
	return fmt.Sprintf("environment %q declares no from, so no environment promotes into it; write from = %q in its environment block to promote %s → %s",
		e.To, e.From, e.From, e.To)
}

// CheckPromotion tells whether builds may be promoted from environment
// from to environment to: to's from must name from. Both must exist.
func (c *Catalogue) CheckPromotion(from, to string) error {
	f, t := c.Environment(from), c.Environment(to)
	if f == nil || t == nil || t.From == from {
		return nil
	}
	return &PromotionError{From: from, To: to, Declared: t.From, Reverse: f.From == to}
}
