package server_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image/png"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentsync/agentsync/server"
	"github.com/agentsync/agentsync/server/blob"
	"github.com/agentsync/agentsync/server/internal/providertest"
	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/server/model/anthropic"
	"github.com/agentsync/agentsync/server/model/openai"
	"github.com/agentsync/agentsync/server/model/scripted"
	"github.com/agentsync/agentsync/synccore"
)

// withFiles serves cfg with a real blob.Dir on loopback over a SQLite file.
func withFiles(t *testing.T, cfg server.Config, at server.Attachments) (*live, blob.Store) {
	t.Helper()
	blobs, err := blob.OpenDir(filepath.Join(t.TempDir(), "files"))
	if err != nil {
		t.Fatal(err)
	}
	at.Blobs = blobs
	cfg.Authorizer = byHeader
	cfg.Attachments = &at
	l := start(t, "", cfg)
	t.Cleanup(func() { l.stop(); _ = blobs.Close() }) // the server first
	return l, blobs
}

// agentDone posts parts as alice and returns the turn's agent message once
// it is done (read back over HTTP, as a client would).
func agentDone(t *testing.T, l *live, sid string, parts []synccore.Part) synccore.Message {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"parts": parts})
	if a := l.call(nil, "alice", "POST", "/v1/sessions/"+sid+"/messages", string(body)); a.status != http.StatusCreated {
		t.Fatalf("post: %d %s", a.status, a.body)
	}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		a := l.call(nil, "alice", "GET", "/v1/sessions/"+sid+"/messages", "")
		var page struct {
			Items []synccore.Message `json:"items"`
		}
		if err := json.Unmarshal(a.body, &page); err != nil {
			t.Fatalf("messages: %v %s", err, a.body)
		}
		if n := len(page.Items); n > 0 {
			if m := page.Items[n-1]; m.Role == synccore.RoleAgent && m.State != synccore.MessageStreaming {
				return m
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the turn did not end within 20 s")
	return synccore.Message{}
}

func partsOf(m synccore.Message, typ synccore.PartType) []synccore.Part {
	var out []synccore.Part
	for _, p := range m.Parts {
		if p.Type == typ {
			out = append(out, p)
		}
	}
	return out
}

func textOf(m synccore.Message) string {
	var b strings.Builder
	for _, p := range partsOf(m, synccore.PartText) {
		b.WriteString(p.Text)
	}
	return b.String()
}

// TestWriteFileTool: the scripted model calls write_file; its output is a
// blob of the session and an agent file part whose URL the authorized file
// route serves, with the bytes and type written, to the session's owner
// only.
func TestWriteFileTool(t *testing.T) {
	t.Parallel()
	l, _ := withFiles(t, server.Config{}, server.Attachments{})
	sid := l.createSession("alice")
	for _, tc := range []struct{ name, mediaType string }{{"report.md", "text/markdown"}, {"dot.png", "image/png"}} {
		m := agentDone(t, l, sid, []synccore.Part{{Type: synccore.PartText, Text: "scenario:write name=" + tc.name}})
		if m.State != synccore.MessageDone {
			t.Fatalf("%s: agent message %s: %+v", tc.name, m.State, m.Parts)
		}
		tools, files := partsOf(m, synccore.PartTool), partsOf(m, synccore.PartFile)
		if len(tools) != 1 || tools[0].ToolName != scripted.ToolWriteFile || tools[0].State != synccore.ToolOutputAvailable {
			t.Fatalf("%s: tool parts %+v", tc.name, tools)
		}
		if len(files) != 1 || files[0].MediaType != tc.mediaType || files[0].Filename != tc.name || files[0].StepID != tools[0].StepID {
			t.Fatalf("%s: file parts %+v (tool step %q)", tc.name, files, tools[0].StepID)
		}
		out, _ := tools[0].Output.(map[string]any)
		if out["url"] != files[0].URL || !strings.HasPrefix(files[0].URL, "/v1/sessions/"+sid+"/files/") {
			t.Fatalf("%s: tool output %v, file url %q", tc.name, out, files[0].URL)
		}
		if want := "I wrote " + tc.name + " ("; !strings.Contains(textOf(m), want) {
			t.Fatalf("%s: text %q, want %q", tc.name, textOf(m), want)
		}

		a := l.call(nil, "alice", "GET", files[0].URL, "")
		if a.status != http.StatusOK || a.header.Get("Content-Type") != tc.mediaType {
			t.Fatalf("%s: GET %s: %d %s", tc.name, files[0].URL, a.status, a.header.Get("Content-Type"))
		}
		if sum := blob.ValidID(out["blob_id"].(string)); !sum || int(out["size"].(float64)) != len(a.body) {
			t.Fatalf("%s: output %v, %d bytes served", tc.name, out, len(a.body))
		}
		switch tc.mediaType {
		case "text/markdown":
			if !strings.HasPrefix(string(a.body), "# Notes\n") {
				t.Fatalf("report.md served %q", a.body)
			}
		case "image/png":
			img, err := png.Decode(bytes.NewReader(a.body))
			if err != nil || img.Bounds().Dx() != 16 {
				t.Fatalf("dot.png served is not the 16×16 PNG: %v", err)
			}
		}
		if b := l.call(nil, "bob", "GET", files[0].URL, ""); b.status != http.StatusNotFound {
			t.Fatalf("%s: bob reads alice's file: %d", tc.name, b.status)
		}
	}

	// A bad input is the tool's error, and the model says so.
	m := agentDone(t, l, sid, []synccore.Part{{Type: synccore.PartText, Text: "scenario:write name=a/b.md"}})
	if tools := partsOf(m, synccore.PartTool); len(tools) != 1 || tools[0].State != synccore.ToolOutputError || len(partsOf(m, synccore.PartFile)) != 0 {
		t.Fatalf("bad name: %+v", m.Parts)
	}
}

// TestModelReceivesUploadedFiles: a user message's files of the session
// reach an OpenAI-compatible server and Anthropic's (real ones on
// loopback, speaking Chat Completions and Messages) as bytes in their
// documented shapes: the image an image_url part with a data: URL or an
// image block with a base64 source, the PDF a file part or a document
// block, the text file as text, the file over the budget as a note; the
// request never carries the session's file URL.
func TestModelReceivesUploadedFiles(t *testing.T) {
	t.Parallel()
	pngData := []byte("\x89PNG\r\n\x1a\n" + strings.Repeat("p", 100))
	pdfData := []byte("%PDF-1.4\n" + strings.Repeat("d", 200))
	const budget = 4096
	b64 := base64.StdEncoding.EncodeToString
	common := []string{
		"text:<file name=\"notes.txt\" media_type=\"text/plain\">\nremember the milk\n</file>",
		"text:[The file huge.pdf (application/pdf, 4105 bytes) was left out: it is over the 4096 bytes of files a model request may carry.]",
	}
	for _, tc := range []struct {
		name, path string
		provider   func(url string) model.Provider
		want       []string
	}{
		{"openai", "/v1/chat/completions", func(u string) model.Provider { return openai.New("gpt-4o-mini", u+"/v1", "sk-test", nil) },
			append([]string{"text:Read these.", "image:data:image/png;base64," + b64(pngData),
				"file:doc.pdf:data:application/pdf;base64," + b64(pdfData)}, common...)},
		{"anthropic", "/v1/messages", func(u string) model.Provider { return anthropic.New("claude-sonnet-4-5", u, "sk-ant-test", nil) },
			append([]string{"text:Read these.", "image:base64:image/png:" + b64(pngData),
				"document:base64:application/pdf:" + b64(pdfData)}, common...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			fake := providertest.New()
			defer fake.Close()
			fake.Queue(providertest.Reply{Fixture: filepath.Join("model", "testdata", tc.name, "text.sse")})
			l, blobs := withFiles(t, server.Config{
				Models:       model.Registry{tc.name + ":m": tc.provider(fake.URL)},
				DefaultModel: tc.name + ":m",
			}, server.Attachments{ModelFileBudget: budget})
			sid := l.createSession("alice")
			files := []struct {
				name, mediaType string
				data            []byte
			}{
				{"cat.png", "image/png", pngData},
				{"doc.pdf", "application/pdf", pdfData},
				{"notes.txt", "text/plain", []byte("remember the milk")},
				{"huge.pdf", "application/pdf", []byte("%PDF-1.4\n" + strings.Repeat("h", budget))},
			}
			parts := []synccore.Part{{Type: synccore.PartText, Text: "Read these."}}
			for _, f := range files {
				ref, err := blobs.Put(ctx, blob.Ref{SessionID: sid, Filename: f.name, MediaType: f.mediaType}, bytes.NewReader(f.data), 0)
				if err != nil {
					t.Fatal(err)
				}
				parts = append(parts, synccore.Part{Type: synccore.PartFile, URL: server.FilePath(sid, ref.BlobID), MediaType: f.mediaType, Filename: f.name})
			}
			if m := agentDone(t, l, sid, parts); m.State != synccore.MessageDone {
				t.Fatalf("agent message %s: %+v", m.State, m.Parts)
			}
			reqs := fake.Requests()
			if len(reqs) != 1 || reqs[0].Path != tc.path {
				t.Fatalf("requests %+v", reqs)
			}
			if raw := reqs[0].Raw; bytes.Contains(raw, []byte("/v1/sessions/")) {
				t.Fatalf("the provider got a URL only this server serves: %s", raw)
			}
			msgs := reqs[0].Body["messages"].([]any)
			content := msgs[len(msgs)-1].(map[string]any)["content"].([]any)
			var got []string
			for _, c := range content {
				c := c.(map[string]any)
				switch c["type"] {
				case "text":
					got = append(got, "text:"+c["text"].(string))
				case "image_url":
					got = append(got, "image:"+c["image_url"].(map[string]any)["url"].(string))
				case "file":
					f := c["file"].(map[string]any)
					got = append(got, "file:"+f["filename"].(string)+":"+f["file_data"].(string))
				case "image", "document":
					src := c["source"].(map[string]any)
					got = append(got, c["type"].(string)+":"+src["type"].(string)+":"+src["media_type"].(string)+":"+src["data"].(string))
				default:
					got = append(got, "other:"+c["type"].(string))
				}
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Fatalf("user content:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}
