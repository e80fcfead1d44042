"""What an agent remembers and how it retrieves: chunking, BM25, dense, hybrid."""
