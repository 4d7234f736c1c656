// Reads one image reference per JSON line {"image": ...} and prints what the kubelet's parser,
// reference.ParseNormalizedNamed of github.com/distribution/reference v0.6.0 (with
// github.com/opencontainers/go-digest validating the digest), makes of it: {"error": ...} or
// the normalized name, tag and digest. go-digest knows an algorithm only when its hash is
// linked in, as it is in the kubelet: crypto/sha256 and crypto/sha512 (which has sha384).
package main

import (
	"bufio"
	_ "crypto/sha256"
	_ "crypto/sha512"
	"encoding/json"
	"os"

	"github.com/distribution/reference"
)

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<24)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	for in.Scan() {
		var c struct {
			Image string `json:"image"`
		}
		if err := json.Unmarshal(in.Bytes(), &c); err != nil {
			panic(err)
		}
		named, err := reference.ParseNormalizedNamed(c.Image)
		if err != nil {
			enc.Encode(map[string]interface{}{"image": c.Image, "error": err.Error()})
			continue
		}
		rec := map[string]interface{}{"image": c.Image, "name": named.Name()}
		if t, ok := named.(reference.Tagged); ok {
			rec["tag"] = t.Tag()
		}
		if d, ok := named.(reference.Digested); ok {
			rec["digest"] = d.Digest().String()
		}
		enc.Encode(rec)
	}
}
