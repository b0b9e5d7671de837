package main

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pin-tool/pin/internal/catalogue"
)

// Completions of module and host names, read from the catalogue that
// --catalogue names (or the default). Completing reads the catalogue's
// files only: no host, registry or lock is asked. A catalogue with errors
// completes with what could be read; one that cannot be read completes
// nothing.

// catalogueNames returns the names of the catalogue's modules (hosts:
// false) or hosts that start with prefix, leaving out those in skip.
func catalogueNames(g *globalOptions, hosts bool, prefix string, skip []string) []cobra.Completion {
	c, _ := catalogue.Load(g.Catalogue)
	if c == nil {
		return nil
	}
	var names []string
	if hosts {
		for _, h := range c.Hosts {
			names = append(names, h.Name)
		}
	} else {
		for _, m := range c.Modules {
			names = append(names, m.Name)
		}
	}
	var out []cobra.Completion
	for _, n := range names {
		if strings.HasPrefix(n, prefix) && !slices.Contains(skip, n) {
			out = append(out, n)
		}
	}
	return out
}

// completeModules completes "pin resolve MODULE…": every module not
// named yet.
func completeModules(g *globalOptions) cobra.CompletionFunc {
	return func(_ *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return catalogueNames(g, false, toComplete, args), cobra.ShellCompDirectiveNoFileComp
	}
}

// completeHost completes one host name: "pin plan HOST" and
// "pin lock --from-host HOST".
func completeHost(g *globalOptions) cobra.CompletionFunc {
	return func(_ *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return catalogueNames(g, true, toComplete, nil), cobra.ShellCompDirectiveNoFileComp
	}
}

// completePlanHost completes plan's one argument.
func completePlanHost(g *globalOptions) cobra.CompletionFunc {
	host := completeHost(g)
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return host(cmd, args, toComplete)
	}
}

// completeEnvironment completes "--environment NAME": the catalogue's
// environments.
func completeEnvironment(g *globalOptions) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		c, _ := catalogue.Load(g.Catalogue)
		var out []cobra.Completion
		if c != nil {
			for _, e := range c.Environments {
				if strings.HasPrefix(e.Name, toComplete) {
					out = append(out, e.Name)
				}
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}
