// Command pulumi-resource-kubernetes serves pulumi-kubernetes' provider.
//
// The upstream main package (provider/cmd/pulumi-resource-kubernetes) embeds a
// schema file its Makefile generates before building, which the module zip
// does not carry, so it cannot be built from the module proxy. This program
// calls the same entry point, provider.Serve, with the provider's own
// schema.json and terraform-mapping.json read at start-up from the folder of
// the executable, where the e2e build copies them from the module.
package main

import (
	"encoding/json"
	"log"
	"os"
	"path/filepath"

	"github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/provider"
	"github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/version"
)

func main() {
	schema := readJSON("schema.json")
	// generate.go upstream stamps the release into the schema it embeds.
	schema["version"] = version.Version
	provider.Serve("kubernetes", version.Version, marshal(schema), marshal(readJSON("terraform-mapping.json")))
}

func readJSON(name string) map[string]any {
	exe, err := os.Executable()
	if err != nil {
		log.Fatalf("pulumi-resource-kubernetes: %v", err)
	}
	data, err := os.ReadFile(filepath.Join(filepath.Dir(exe), name))
	if err != nil {
		log.Fatalf("pulumi-resource-kubernetes: %v", err)
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		log.Fatalf("pulumi-resource-kubernetes: %s: %v", name, err)
	}
	return out
}

func marshal(v any) []byte {
	data, err := json.Marshal(v)
	if err != nil {
		log.Fatalf("pulumi-resource-kubernetes: %v", err)
	}
	return data
}
