package main

import (
	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/source"
)

// checkModuleNames refuses names that are not modules of the catalogue
// (exit 2), listing the ones that are.
func checkModuleNames(c *catalogue.Catalogue, names []string) error {
	if err := source.CheckModules(c, names); err != nil {
		return withCode(exitInput, err)
	}
	return nil
}
