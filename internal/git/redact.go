package git

import "regexp"

// Redacted stands for a URL's user information in what pin prints.
const Redacted = "***"

// userinfoRe is the user information of a URL in text ("scheme://…@"):
// a token is as often written as the user name (https://glpat-…@host,
// https://ghp_…@github.com) as after it, so all of it goes.
var userinfoRe = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://)[^/?#@\s'"]+@`)

// RedactURL is s with the user information of every URL in it replaced by
// Redacted: "https://***@host/o/r.git". git itself removes a password
// from the URLs it prints, but not a token written as the user name.
func RedactURL(s string) string {
	return userinfoRe.ReplaceAllString(s, "${1}"+Redacted+"@")
}
