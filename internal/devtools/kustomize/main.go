// Command kustomize renders a kustomization with kustomize's own Go API
// (sigs.k8s.io/kustomize/api), as "kubectl kustomize DIR" would, and
// prints the YAML. pin's tests run it to check that the images: entries
// pin export writes render to the locked references. It is its own module
// so that pin's go.mod never depends on kustomize.
package main

import (
	"fmt"
	"os"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: kustomize DIR")
		os.Exit(2)
	}
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	m, err := k.Run(filesys.MakeFsOnDisk(), os.Args[1])
	if err != nil {
		fmt.Fprintf(os.Stderr, "kustomize: %v\n", err)
		os.Exit(1)
	}
	out, err := m.AsYaml()
	if err != nil {
		fmt.Fprintf(os.Stderr, "kustomize: %v\n", err)
		os.Exit(1)
	}
	os.Stdout.Write(out)
}
