`default_nettype none
// tt_bank: one on-chip memory bank of the accelerator: WIDTH-bit words, one write port and READ_PORTS
// synchronous read ports (data valid the cycle after rd_en). Each read port reads its own copy of the
// words (every copy takes every write): FPGA block RAMs give one read and one write port per copy, and the
// compiler only needs two reads of one bank in the same cycle (two activations, or a gradient and its
// momentum), so a bank costs READ_PORTS x DEPTH x WIDTH bits. A read of the address written in the same
// cycle returns the old word. The words are not reset: a reset of the accelerator leaves the state readable.
module tt_bank #(
  parameter integer WIDTH      = 16,  // bits per word, 1..32
  parameter integer DEPTH      = 1024,
  parameter integer AW         = 10,  // local address width: DEPTH <= 2^AW
  parameter integer READ_PORTS = 1    // 1..2
) (
  input  wire                       clk,
  input  wire                       wr_en,
  input  wire [AW-1:0]              wr_addr,
  input  wire [WIDTH-1:0]           wr_data,
  input  wire [READ_PORTS-1:0]      rd_en,
  input  wire [READ_PORTS*AW-1:0]   rd_addr,
  output wire [READ_PORTS*WIDTH-1:0] rd_data
);

  generate
    if (WIDTH < 1 || WIDTH > 32) begin : g_bad_width
      error_tt_bank_WIDTH_must_be_1_to_32 u_error ();
    end
    if (DEPTH < 1 || DEPTH > (1 << AW)) begin : g_bad_depth
      error_tt_bank_DEPTH_must_be_1_to_2_pow_AW u_error ();
    end
    if (READ_PORTS < 1 || READ_PORTS > 2) begin : g_bad_ports
      error_tt_bank_READ_PORTS_must_be_1_or_2 u_error ();
    end
  endgenerate

  // Words past DEPTH do not exist: the router (tt_banks) never sends their addresses, so a copy is
  // indexed by the low IW address bits and is exactly DEPTH words.
  localparam integer IW = (DEPTH > 1) ? $clog2(DEPTH) : 1;
  wire unused_addr = ^{wr_addr, rd_addr};

  genvar p;
  generate
    for (p = 0; p < READ_PORTS; p = p + 1) begin : g_copy
      reg [WIDTH-1:0] mem [0:DEPTH-1] /* verilator public_flat_rd */;  // the host checker reads it (verif/host.py Backdoor)
      reg [WIDTH-1:0] rd_q;
      always @(posedge clk) begin
        if (wr_en) begin
          mem[wr_addr[IW-1:0]] <= wr_data;
        end
        if (rd_en[p]) begin
          rd_q <= mem[rd_addr[p*AW +: IW]];
        end
      end
      assign rd_data[p*WIDTH +: WIDTH] = rd_q;
    end
  endgenerate

endmodule
`default_nettype wire
