package shellcmd_test

import (
	"fmt"

	"github.com/agent-mcp/agent-mcp/permissions/shellcmd"
)

func ExampleParse() {
	s, err := shellcmd.Parse(`cd src && timeout 60 go test ./... > test.log; bash -c 'rm -rf "$TMP"'`)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range s.Commands {
		fmt.Printf("%q via %q\n", c.Text(), c.Via)
	}
	for _, w := range s.Writes {
		fmt.Println("writes", w.Target.Value)
	}
	fmt.Println("read-only:", s.IsReadOnly())
	// Output:
	// "cd src" via []
	// "go test ./..." via []
	// "rm -rf \"$TMP\"" via ["bash -c"]
	// writes test.log
	// read-only: false
}

func ExampleIsReadOnly() {
	fmt.Println(shellcmd.IsReadOnly("git log --oneline | head -5"))
	fmt.Println(shellcmd.IsReadOnly("find . -name '*.o' -delete"))
	// Output:
	// true
	// false
}
