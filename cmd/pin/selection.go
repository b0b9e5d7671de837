package main

import (
	"fmt"
	"strings"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/resolve"
)

// only is resolve.Input.Only for "pin resolve MODULE…": nil (every module)
// without arguments.
func (o *resolveOptions) only() []string {
	if len(o.Modules) == 0 {
		return nil
	}
	return o.Modules
}

// checkModuleNames refuses names that are not modules of the catalogue
// (exit 2), listing the ones that are.
func checkModuleNames(c *catalogue.Catalogue, names []string) error {
	unknown := resolve.UnknownModules(c, names)
	if len(unknown) == 0 {
		return nil
	}
	var known []string
	for _, m := range c.Modules {
		known = append(known, m.Name)
	}
	for i, n := range unknown {
		unknown[i] = fmt.Sprintf("%q", n)
	}
	what := "module"
	if len(unknown) > 1 {
		what = "modules"
	}
	return withCode(exitInput, fmt.Errorf("no %s %s in the catalogue; its modules are %s", what, joinAnd(unknown), strings.Join(known, ", ")))
}
