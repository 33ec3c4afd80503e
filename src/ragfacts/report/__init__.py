"""Runs rendered: run directories read back and compared (`report`), the HTML report (`html_report`, `charts`,
`views`), the notebook and terminal texts (`display`), and Face4RAG's official output CSV (`official_csv`)."""
