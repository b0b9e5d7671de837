package catalogue

import "unicode"

// HasWords reports whether a reason (allow_downgrade, restore, or the
// override an enforcement point reads from an annotation or a label)
// says something: it holds a letter or a digit. One made of spaces, or
// of characters nobody sees (a zero-width space U+200B, a word joiner
// U+2060, other format and space code points), is no reason: it would
// accept a downgrade with words nobody wrote. Every path that takes a
// reason asks this.
func HasWords(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsNumber(r) {
			return true
		}
	}
	return false
}
