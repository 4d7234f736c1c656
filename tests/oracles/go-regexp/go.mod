module kubetrain.test/oracles/goregexp

go 1.26
