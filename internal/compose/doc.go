// Package compose reads Compose projects the way Docker Compose does, with
// github.com/compose-spec/compose-go/v2: several files merged in order,
// variables interpolated from the environment and .env (with
// ${VAR:-default}), profiles applied. It returns each service's image with
// the file and line that set it.
//
// It refuses what Compose would only warn about: a variable with neither a
// value nor a default, and an image that is not a valid reference. Other
// warnings (an obsolete "version" attribute, say) are returned in
// Project.Warnings, never printed. It does not talk to an engine and does
// not write files; package export rewrites Compose files and package
// scaffold turns services into modules.
package compose
