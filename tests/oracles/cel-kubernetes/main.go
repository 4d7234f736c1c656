// Reads JSON lines {"rule": ...} and prints, per line, whether a kube-apiserver of each minor
// version 1.25 to 1.37 would compile the rule as a new CRD validation rule: the NewExpressions
// environment of k8s.io/apiserver v0.36.2's base environment at the compatibility version the
// server uses for new expressions (its own version minus one, DefaultCompatibilityVersion),
// with self and oldSelf declared as dyn (the types of a schema are not what is tested here).
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"

	"github.com/google/cel-go/cel"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apiserver/pkg/cel/environment"
)

type candidate struct {
	Rule string `json:"rule"`
}

func main() {
	envs := map[string]*cel.Env{}
	for minor := uint(25); minor <= 37; minor++ {
		set := environment.MustBaseEnvSet(version.MajorMinor(1, minor-1))
		extended, err := set.Extend(environment.VersionedOptions{
			IntroducedVersion: version.MajorMinor(1, 0),
			EnvOptions: []cel.EnvOption{
				cel.Variable("self", cel.DynType),
				cel.Variable("oldSelf", cel.DynType),
			},
		})
		if err != nil {
			panic(err)
		}
		env, err := extended.Env(environment.NewExpressions)
		if err != nil {
			panic(err)
		}
		envs[fmt.Sprintf("1.%d", minor)] = env
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<24)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	for in.Scan() {
		var c candidate
		if err := json.Unmarshal(in.Bytes(), &c); err != nil {
			panic(err)
		}
		verdicts := map[string]string{}
		for v, env := range envs {
			_, issues := env.Compile(c.Rule)
			if issues != nil && issues.Err() != nil {
				verdicts[v] = issues.Err().Error()
			} else {
				verdicts[v] = ""
			}
		}
		enc.Encode(map[string]interface{}{"rule": c.Rule, "errors": verdicts})
	}
}
