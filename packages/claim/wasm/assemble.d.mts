/** The kernel's bytes: the WAT source assembled by wabt. */
export declare function assembleKernel(): Promise<Uint8Array>;
/** The generated TypeScript module text holding the bytes. */
export declare function kernelModuleText(bytes: Uint8Array): string;
