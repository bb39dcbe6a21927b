// Command notesserver is a small MCP server used by the tests of capture
// and serve: it keeps notebooks as files under the directory named by
// $NOTES_DIR, one line per note. open_notebook and add_note change the
// directory (add_note is additive, not destructive), list_notes only
// reads it, so the three tools carry the three shapes of annotations a
// recording has to tell apart.
package main

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type openArgs struct {
	Name string `json:"name" jsonschema:"the notebook's name"`
}

type openResult struct {
	Notebook string `json:"notebook"`
	Path     string `json:"path"`
}

type addArgs struct {
	Notebook string `json:"notebook"`
	Text     string `json:"text"`
}

type addResult struct {
	Notebook string `json:"notebook"`
	Count    int    `json:"count"`
}

type listArgs struct {
	Notebook string `json:"notebook"`
}

type listResult struct {
	Notes []string `json:"notes"`
}

func main() {
	dir := os.Getenv("NOTES_DIR")
	if dir == "" {
		log.Fatal("NOTES_DIR is not set")
	}
	file := func(name string) (string, error) {
		if name == "" || strings.ContainsAny(name, `/\`) || name == "." || name == ".." {
			return "", fmt.Errorf("bad notebook name %q", name)
		}
		return filepath.Join(dir, name+".txt"), nil
	}
	no := false
	s := mcp.NewServer(&mcp.Implementation{Name: "notes", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "open_notebook",
		Description: "Create the notebook if it does not exist",
		Annotations: &mcp.ToolAnnotations{IdempotentHint: true, DestructiveHint: &no, OpenWorldHint: &no},
	}, func(ctx context.Context, req *mcp.CallToolRequest, in openArgs) (*mcp.CallToolResult, openResult, error) {
		p, err := file(in.Name)
		if err != nil {
			return nil, openResult{}, err
		}
		f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return nil, openResult{}, err
		}
		f.Close()
		return nil, openResult{Notebook: in.Name, Path: in.Name + ".txt"}, nil
	})
	mcp.AddTool(s, &mcp.Tool{
		Name:        "add_note",
		Description: "Append a note to a notebook",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: &no, OpenWorldHint: &no},
	}, func(ctx context.Context, req *mcp.CallToolRequest, in addArgs) (*mcp.CallToolResult, addResult, error) {
		p, err := file(in.Notebook)
		if err != nil {
			return nil, addResult{}, err
		}
		if strings.Contains(in.Text, "\n") {
			return nil, addResult{}, fmt.Errorf("a note is one line")
		}
		f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return nil, addResult{}, fmt.Errorf("notebook %s is not open", in.Notebook)
		}
		_, err = fmt.Fprintln(f, in.Text)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, addResult{}, err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, addResult{}, err
		}
		return nil, addResult{Notebook: in.Notebook, Count: strings.Count(string(data), "\n")}, nil
	})
	mcp.AddTool(s, &mcp.Tool{
		Name:        "list_notes",
		Description: "List the notes of a notebook",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &no},
	}, func(ctx context.Context, req *mcp.CallToolRequest, in listArgs) (*mcp.CallToolResult, listResult, error) {
		p, err := file(in.Notebook)
		if err != nil {
			return nil, listResult{}, err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, listResult{Notes: []string{}}, nil
		}
		notes := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
		if len(data) == 0 {
			notes = []string{}
		}
		return nil, listResult{Notes: notes}, nil
	})
	// wait reports progress, then waits for the client to cancel it and
	// leaves cancelled.txt behind as proof that the cancellation arrived.
	mcp.AddTool(s, &mcp.Tool{
		Name:        "wait",
		Description: "Report progress, then wait until cancelled",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &no},
	}, func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, struct{}, error) {
		for i := 1; i <= 3; i++ {
			if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
				ProgressToken: req.Params.GetProgressToken(), Progress: float64(i), Total: 3, Message: fmt.Sprintf("step %d", i),
			}); err != nil {
				return nil, struct{}{}, err
			}
		}
		<-ctx.Done()
		os.WriteFile(filepath.Join(dir, "cancelled.txt"), []byte("cancelled\n"), 0o644)
		return nil, struct{}{}, ctx.Err()
	})
	// announce answers at once, then, outside any request, adds a tool
	// (the server sends notifications/tools/list_changed) and logs a
	// message to every session: over HTTP, before protocol 2026-07-28,
	// both travel on the standalone stream.
	mcp.AddTool(s, &mcp.Tool{
		Name:        "announce",
		Description: "Add a tool and log a message, after answering",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &no},
	}, func(ctx context.Context, req *mcp.CallToolRequest, in struct {
		Message string `json:"message"`
	}) (*mcp.CallToolResult, struct{}, error) {
		go func() {
			time.Sleep(50 * time.Millisecond)
			s.AddTool(&mcp.Tool{Name: "announced", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
			time.Sleep(50 * time.Millisecond)
			for ss := range s.Sessions() {
				//lint:ignore SA1019 logging is what servers before 2026-07-28 send outside a request
				ss.Log(context.Background(), &mcp.LoggingMessageParams{Level: "info", Data: in.Message})
			}
		}()
		return nil, struct{}{}, nil
	})
	if len(os.Args) > 2 && os.Args[1] == "-http" {
		h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
		log.Fatal(http.ListenAndServe(os.Args[2], h))
	}
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
