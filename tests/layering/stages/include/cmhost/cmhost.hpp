// the embedder API
