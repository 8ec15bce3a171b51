`default_nettype none
// tt_prim_ram_generic: tt_prim_ram as an inferred memory (the ports and behaviour are tt_prim_ram's). no_rw_check:
// synthesis builds no read-during-write logic (tt_prim_ram leaves that read undefined). The memory is public (to the
// simulator) so that the host's checker can read it (verif/host.py).
module tt_prim_ram_generic #(
  parameter integer WIDTH   = 16,
  parameter integer DEPTH   = 512,
  parameter integer AW      = 9,
  parameter integer OUT_REG = 0,
  parameter integer PARTS   = 1
) (
  input  wire             clk,
  input  wire             wr_en,
  input  wire [PARTS-1:0] wr_part,
  input  wire [AW-1:0]    wr_addr,
  input  wire [WIDTH-1:0] wr_data,
  input  wire             rd_en,
  input  wire [AW-1:0]    rd_addr,
  output wire [WIDTH-1:0] rd_data
);

  localparam integer IW = (DEPTH > 1) ? $clog2(DEPTH) : 1;  // the address bits that name a word
  localparam integer PW = WIDTH / PARTS;
  wire unused_addr = ^{wr_addr, rd_addr};

  (* no_rw_check *)
  reg [WIDTH-1:0] mem [0:DEPTH-1] /* verilator public_flat_rd */;
  reg [WIDTH-1:0] rd_q;
  always @(posedge clk) begin : p_access
    integer p;
    // one write port whose parts are enabled on their own: yosys maps it onto a block RAM's byte enables
    for (p = 0; p < PARTS; p = p + 1) begin
      if (wr_en && wr_part[p]) begin
        mem[wr_addr[IW-1:0]][PW*p +: PW] <= wr_data[PW*p +: PW];
      end
    end
    if (rd_en) begin
      rd_q <= mem[rd_addr[IW-1:0]];
    end
  end

  generate
    if (OUT_REG != 0) begin : g_out_reg
      reg [WIDTH-1:0] out_q;
      always @(posedge clk) begin
        out_q <= rd_q;
      end
      assign rd_data = out_q;
    end else begin : g_direct
      assign rd_data = rd_q;
    end
  endgenerate

endmodule
`default_nettype wire
