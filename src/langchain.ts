/** `retrace-eval/langchain`: retrace's parts as LangChain components (see src/adapters/langchain.ts). */
export { RetraceEmbeddings, RetraceRetriever, documentsOf, type RetraceEmbeddingsInput, type RetraceRetrieverInput } from "./adapters/langchain.js";
