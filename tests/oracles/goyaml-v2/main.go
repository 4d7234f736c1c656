// Reads one plain scalar per line and prints, per line, the JSON of what go-yaml v2 decodes
// "v: <scalar>" into (an interface{}), or {"error": ...}.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"

	yaml "gopkg.in/yaml.v2"
)

func main() {
	in := bufio.NewScanner(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for in.Scan() {
		var m map[string]interface{}
		err := yaml.Unmarshal([]byte("v: "+in.Text()+"\n"), &m)
		var rec map[string]interface{}
		if err != nil {
			rec = map[string]interface{}{"error": err.Error()}
		} else {
			v := m["v"]
			typ := fmt.Sprintf("%T", v)
			switch x := v.(type) {
			case float64:
				if math.IsInf(x, 0) || math.IsNaN(x) {
					rec = map[string]interface{}{"type": "float", "repr": fmt.Sprint(x)}
				} else {
					rec = map[string]interface{}{"type": "float", "value": x}
				}
			case int, int64, uint64:
				rec = map[string]interface{}{"type": "int", "repr": fmt.Sprint(x)}
			default:
				rec = map[string]interface{}{"type": typ, "value": v}
			}
		}
		b, _ := json.Marshal(rec)
		out.Write(b)
		out.WriteString("\n")
	}
}
