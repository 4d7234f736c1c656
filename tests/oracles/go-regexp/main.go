// Reads JSON lines {"pattern": ..., "texts": [...]} and prints, per line, what Go's regexp
// makes of the pattern: {"error": <regexp.Compile's error>} or {"matches": [MatchString of each
// text]}. Built with the Go toolchain kubetrain's e2e tier builds Kubernetes v1.36 with.
package main

import (
	"bufio"
	"encoding/json"
	"os"
	"regexp"
)

type candidate struct {
	Pattern string   `json:"pattern"`
	Texts   []string `json:"texts"`
}

func main() {
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
		re, err := regexp.Compile(c.Pattern)
		if err != nil {
			enc.Encode(map[string]interface{}{"pattern": c.Pattern, "error": err.Error()})
			continue
		}
		matches := make([]bool, len(c.Texts))
		for i, t := range c.Texts {
			matches[i] = re.MatchString(t)
		}
		enc.Encode(map[string]interface{}{"pattern": c.Pattern, "texts": c.Texts, "matches": matches})
	}
}
